// The cost model's words and messages (src/model/grid_volume) on hand-computed cases. The MPI
// tests check it against the communication layer's counts on every grid; these pin the numbers.
#include <gtest/gtest.h>

#include "convgrid/error.hpp"
#include "model/grid_volume.hpp"

namespace convgrid {
namespace {

PassVolume volume(const char* shape, GridDims d, int64_t rank, Pass p, Held held = {}) {
  LayerLayout L(ConvShape::parse(shape), d);
  return grid_pass_volume(L, d.coord_of(rank), p, held);
}

TEST(GridVolume, DataParallelGathersWeightsAndReduceScattersTheirGradient) {
  // 64*64*3*3 = 36864 weights over 2 ranks: each gathers the other half, reduce-scatters its half.
  const char* s = "N=32,C=64,H=56,W=56,K=64,R=3,S=3,pad=1";
  GridDims dp{2, 1, 1, 1, 1};
  EXPECT_EQ(volume(s, dp, 0, Pass::forward).all_gather, 18432);
  EXPECT_EQ(volume(s, dp, 0, Pass::forward).words(), 18432);
  EXPECT_EQ(volume(s, dp, 0, Pass::forward).messages, 1);
  EXPECT_EQ(volume(s, dp, 1, Pass::backward_data, Held{true, true, false}).words(), 0);
  EXPECT_EQ(volume(s, dp, 1, Pass::backward_weights, Held{true, true, true}).reduce_scatter, 18432);
  // Gathered weights plus reduce-scattered gradients: the all-reduce of data parallelism.
  EXPECT_EQ(volume(s, dp, 1, Pass::forward).words() +
                volume(s, dp, 1, Pass::backward_weights, Held{true, true, true}).words(),
            2 * 18432);
}

TEST(GridVolume, SpatialSplitTakesOneHaloRowFromEachNeighbour) {
  // 3x3, pad 1, H=8 over Ph=2: output rows [0,4) and [4,8), input rows owned the same way.
  // ph=0 needs [0,5): it receives row 4 from ph=1 (2 samples x 3 channels x 5 columns = 30
  // words); ph=1 needs [3,8): it receives row 3 from ph=0.
  const char* s = "N=2,C=3,H=8,W=5,K=4,R=3,S=3,pad=1";
  GridDims sp{1, 1, 1, 2, 1};
  for (int64_t r : {0, 1}) {
    const PassVolume f = volume(s, sp, r, Pass::forward);
    EXPECT_EQ(f.point_to_point, 2 * 3 * 1 * 5);
    EXPECT_EQ(f.all_gather, 4 * 3 * 9 / 2);  // the weights, gathered over the 2-rank nhw-fibre
    EXPECT_EQ(f.messages, 2);
    // Backward-data sends the halo's gradient back to its owner: each receives those 30 words.
    EXPECT_EQ(volume(s, sp, r, Pass::backward_data, Held{true, true, false}).point_to_point, 30);
  }
}

TEST(GridVolume, ChannelSplitsGatherInputAndReduceScatterOutput) {
  const char* s = "N=2,C=4,H=6,W=6,K=6,R=3,S=3,pad=1";
  // Pk=2: In (2x4x6x6 = 288) is split over the k-fibre by channels; each gathers the other 144.
  EXPECT_EQ(volume(s, GridDims{1, 2, 1, 1, 1}, 0, Pass::forward).all_gather, 144);
  // Pc=2: each rank makes a partial Out (2x6x6x6 = 432) and receives the other's half of its slice.
  const PassVolume f = volume(s, GridDims{1, 1, 2, 1, 1}, 1, Pass::forward);
  EXPECT_EQ(f.reduce_scatter, 216);
  EXPECT_EQ(f.all_gather, 0);
  // Backward-data on Pk=2: dIn's reduce-scatter over the k-fibre, 144 words.
  EXPECT_EQ(volume(s, GridDims{1, 2, 1, 1, 1}, 0, Pass::backward_data, Held{true, true, false})
                .reduce_scatter, 144);
}

TEST(GridVolume, LatencyStepsAreTheRoundsOfOpenMpisAlgorithmsAndOneAHaloMessage) {
  // Grid 2,3,4,1,1: forward gathers In over the k-fibre of 3 (144 bytes a rank: Open MPI's
  // gather + binomial broadcast, 1 + 2 rounds), Ker over the nhw-fibre of 2 (1 round) and
  // reduce-scatters Out (a block of 2x2x6x6 words, 576 bytes) over the c-fibre of 4 (recursive
  // halving, 2 rounds): 3 messages, 6 rounds.
  const char* s = "N=4,C=8,H=6,W=6,K=6,R=1,S=1";
  const PassVolume f = volume(s, GridDims{2, 3, 4, 1, 1}, 0, Pass::forward);
  EXPECT_EQ(f.messages, 3);
  EXPECT_EQ(f.latency_steps, 6);
  // A halo message is one round: the spatial split above, rank 0 (2 rows from ph=1, and the
  // weights over the nhw-fibre of 2).
  const PassVolume h = volume("N=2,C=3,H=8,W=5,K=4,R=3,S=3,pad=1", GridDims{1, 1, 1, 2, 1}, 0, Pass::forward);
  EXPECT_EQ(h.messages, 2);
  EXPECT_EQ(h.latency_steps, 2);
  // Nothing over fibres of one rank.
  EXPECT_EQ(volume(s, GridDims{1, 1, 1, 1, 1}, 0, Pass::forward).latency_steps, 0);
}

TEST(GridVolume, DepthwiseMovesItsHalosAndItsWeightsOnly) {
  // C=K=G=8, 3x3 pad 1 on 8x8, N=2. Grid 1,4,1,2,1: each pk holds 2 whole channels (no input
  // fibre, no c-fibre), Ph=2 splits output and input rows [0,4) and [4,8). ph=0 needs [0,5): row 4
  // from ph=1, 1 row x 8 columns x 2 channels x 2 samples = 32 words; ph=1 needs row 3 from ph=0,
  // 32 words. Its 2 filters of 3x3 are gathered over the nhw-fibre of 2: 9 words.
  const char* s = "N=2,C=8,H=8,W=8,K=8,R=3,S=3,pad=1,groups=8";
  const GridDims d{1, 4, 1, 2, 1};
  const PassVolume f0 = volume(s, d, 0, Pass::forward), f1 = volume(s, d, 1, Pass::forward);
  EXPECT_EQ(f0.point_to_point, 32);
  EXPECT_EQ(f1.point_to_point, 32);
  EXPECT_EQ(f0.all_gather, 9);
  EXPECT_EQ(f0.reduce_scatter, 0);
  EXPECT_EQ(f0.words(), 32 + 9);
  // Backward-data sends the halo's gradient back (each receives 32) and reduces nothing;
  // backward-weights reduce-scatters the 18 weight gradients over the same 2 ranks.
  const Held step{true, true, false};
  EXPECT_EQ(volume(s, d, 0, Pass::backward_data, step).words(), 32);
  EXPECT_EQ(volume(s, d, 1, Pass::backward_data, step).words(), 32);
  EXPECT_EQ(volume(s, d, 0, Pass::backward_weights, Held{true, true, true}).words(), 9);
  // Split over channels alone: nothing moves in any pass.
  for (int64_t r = 0; r < 8; ++r) {
    for (Pass p : {Pass::forward, Pass::backward_data, Pass::backward_weights}) {
      EXPECT_EQ(volume(s, GridDims{1, 8, 1, 1, 1}, r, p).words(), 0);
    }
  }
}

TEST(GridVolume, GroupsGatherInputOnlyWithinTheGroup) {
  // G=2 groups of 2 input channels on Pk=4: pk 0,1 share group 0's input (2x2x6x6 = 144 words),
  // each holding half: 72 words gathered, where the ungrouped layer gathers 3/4 of 288 = 216.
  EXPECT_EQ(volume("N=2,C=4,H=6,W=6,K=6,R=3,S=3,pad=1,groups=2", GridDims{1, 4, 1, 1, 1}, 0, Pass::forward).all_gather,
            72);
  EXPECT_EQ(volume("N=2,C=4,H=6,W=6,K=6,R=3,S=3,pad=1", GridDims{1, 4, 1, 1, 1}, 0, Pass::forward).all_gather, 216);
  // Backward-data reduce-scatters dIn over the same 2 ranks: 72 words.
  EXPECT_EQ(volume("N=2,C=4,H=6,W=6,K=6,R=3,S=3,pad=1,groups=2", GridDims{1, 4, 1, 1, 1}, 3, Pass::backward_data,
                   Held{true, true, false})
                .reduce_scatter,
            72);
}

TEST(GridVolume, UnreadPixelsAreNotCounted) {
  // 1x1 stride 2 on 8x8: only 16 of 64 pixels per plane are read; Pk=2 gathers 1 plane of 2.
  const char* s = "N=1,C=2,H=8,W=8,K=2,R=1,S=1,stride=2";
  EXPECT_EQ(volume(s, GridDims{1, 2, 1, 1, 1}, 0, Pass::forward).all_gather, 16);
}

TEST(GridVolume, HeldOperandsAreNotGatheredAgain) {
  const char* s = "N=2,C=4,H=6,W=6,K=6,R=3,S=3,pad=1";
  GridDims d{1, 2, 2, 1, 1};
  EXPECT_GT(volume(s, d, 0, Pass::backward_weights).all_gather, 0);
  EXPECT_EQ(volume(s, d, 0, Pass::backward_weights, Held{true, true, true}).all_gather, 0);
}

}  // namespace
}  // namespace convgrid
