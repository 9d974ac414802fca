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
  EXPECT_EQ(reduce_scatter_rounds(1), 0);
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
}

TEST(CollectiveRounds, LargeGathersTakeTheRing) {
  EXPECT_EQ(rounds(64, 8192), 63);
  EXPECT_EQ(rounds(256, 1024), 255);
  EXPECT_EQ(rounds(512, 1 << 20), 511);
}

TEST(CollectiveRounds, ReduceScattersAreRingsAndNonBlockingCollectivesOneRound) {
  EXPECT_EQ(reduce_scatter_rounds(1024), 1023);
  EXPECT_EQ(nonblocking_rounds(1024), 1);
}

}  // namespace
}  // namespace convgrid
