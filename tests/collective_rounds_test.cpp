// The rounds of Open MPI's collective algorithms (model/collective_rounds.hpp): one case per
// algorithm and the size boundaries that switch between them.
#include "model/collective_rounds.hpp"

#include <gtest/gtest.h>

namespace convgrid {
namespace {

// An all-gather over q ranks of `per_rank` bytes each.
int64_t rounds(int64_t q, int64_t per_rank) { return all_gather_rounds(q, q * per_rank); }

TEST(CollectiveRounds, CeilLog2) {
  EXPECT_EQ(ceil_log2(1), 0);
  EXPECT_EQ(ceil_log2(2), 1);
  EXPECT_EQ(ceil_log2(3), 2);
  EXPECT_EQ(ceil_log2(1024), 10);
  EXPECT_EQ(ceil_log2(1025), 11);
}

TEST(CollectiveRounds, NothingMovesOverOneRank) {
  EXPECT_EQ(rounds(1, 1 << 20), 0);
  EXPECT_EQ(reduce_scatter_rounds(1, 1 << 20), 0);
  EXPECT_EQ(nonblocking_rounds(1), 0);
}

TEST(CollectiveRounds, TwoRanksExchangeOnce) {
  for (int64_t b : {4, 3000, 5000, 1 << 20}) EXPECT_EQ(rounds(2, b), 1) << b;
}

TEST(CollectiveRounds, SmallGathersOverFewRanksGatherThenBroadcast) {
  EXPECT_EQ(rounds(3, 100), 1 + 2);
  EXPECT_EQ(rounds(12, 1000), 1 + 4);
}

TEST(CollectiveRounds, BruckTakesLogRounds) {
  EXPECT_EQ(rounds(12, 1024), 4);
  EXPECT_EQ(rounds(64, 4000), 6);
  EXPECT_EQ(rounds(1024, 4095), 10);
  EXPECT_EQ(rounds(4096, 36), 12);
}

TEST(CollectiveRounds, NeighbourExchangeTakesHalfTheRanksAndTheRingOnOddCounts) {
  EXPECT_EQ(rounds(1024, 4096), 512);
  EXPECT_EQ(rounds(4, 1000), 2);
  EXPECT_EQ(rounds(5, 1000), 4);  // odd: Open MPI falls back to the ring
  EXPECT_EQ(rounds(200, 2048), 100);
  EXPECT_EQ(all_gather_algorithm(1024, 1024 * 4096), AllGather::neighbour);
  EXPECT_EQ(all_gather_algorithm(5, 5 * 1000), AllGather::ring);
  EXPECT_EQ(all_gather_algorithm(12, 12 * 1024), AllGather::bruck);
}

TEST(CollectiveRounds, LargeGathersTakeTheRing) {
  EXPECT_EQ(rounds(64, 8192), 63);
  EXPECT_EQ(rounds(256, 1024), 255);
  EXPECT_EQ(rounds(512, 1 << 20), 511);
}

TEST(CollectiveRounds, FloorLog2) {
  EXPECT_EQ(floor_log2(1), 0);
  EXPECT_EQ(floor_log2(3), 1);
  EXPECT_EQ(floor_log2(4096), 12);
  EXPECT_EQ(floor_log2(4095), 11);
}

// Open MPI 4.1's table (ompi_coll_tuned_reduce_scatter_intra_dec_fixed), at its boundaries.
TEST(CollectiveRounds, ReduceScattersFollowOpenMpisTable) {
  using A = ReduceScatter;
  EXPECT_EQ(reduce_scatter_algorithm(2, 65535), A::ring);
  EXPECT_EQ(reduce_scatter_algorithm(3, 65536), A::butterfly);
  EXPECT_EQ(reduce_scatter_algorithm(3, 131072), A::ring);
  EXPECT_EQ(reduce_scatter_algorithm(4, 7), A::non_overlapping);
  EXPECT_EQ(reduce_scatter_algorithm(7, 262143), A::recursive_halving);
  EXPECT_EQ(reduce_scatter_algorithm(16, 262144), A::ring);
  EXPECT_EQ(reduce_scatter_algorithm(48, 63), A::non_overlapping);
  EXPECT_EQ(reduce_scatter_algorithm(48, 2047), A::recursive_halving);
  EXPECT_EQ(reduce_scatter_algorithm(48, 524287), A::butterfly);
  EXPECT_EQ(reduce_scatter_algorithm(48, 524288), A::ring);
  EXPECT_EQ(reduce_scatter_algorithm(64, 3000), A::recursive_halving);
  EXPECT_EQ(reduce_scatter_algorithm(64, 1 << 24), A::butterfly);
  EXPECT_EQ(reduce_scatter_algorithm(256, 511), A::recursive_halving);
  EXPECT_EQ(reduce_scatter_algorithm(1024, 20000), A::recursive_halving);
  EXPECT_EQ(reduce_scatter_algorithm(1024, 40000), A::butterfly);
  EXPECT_EQ(reduce_scatter_algorithm(4096, 1023), A::non_overlapping);
  EXPECT_EQ(reduce_scatter_algorithm(4096, 8192), A::butterfly);
}

TEST(CollectiveRounds, ReduceScatterRoundsByAlgorithm) {
  EXPECT_EQ(reduce_scatter_rounds(3, 1000), 2);                // ring
  EXPECT_EQ(reduce_scatter_rounds(2, 100000), 1);              // butterfly over 2: one exchange
  EXPECT_EQ(reduce_scatter_rounds(3, 100000), 1 + 1 + 1);      // fold, exchange, mirror/return
  EXPECT_EQ(reduce_scatter_rounds(4, 4), 2 + 1);               // reduce (tree of 4), scatterv
  EXPECT_EQ(reduce_scatter_rounds(16, 1000), 4);               // recursive halving
  EXPECT_EQ(reduce_scatter_rounds(6, 1000), 2 + 2);            // with a fold and a return
  EXPECT_EQ(reduce_scatter_rounds(64, 1 << 20), 6 + 1);        // butterfly and its mirror exchange
  EXPECT_EQ(reduce_scatter_rounds(48, 4096), 5 + 1 + 1);       // folded butterfly
  EXPECT_EQ(reduce_scatter_rounds(16, 1 << 20), 15);           // the ring for large vectors on < 32
  EXPECT_EQ(reduce_scatter_rounds(4096, 9408 * 4), 12 + 1);    // ResNet-50's conv1 dKer at P = 4096
}

TEST(CollectiveRounds, NonBlockingCollectivesTakeOneRound) { EXPECT_EQ(nonblocking_rounds(1024), 1); }

}  // namespace
}  // namespace convgrid
