// The all-reduces of a training step beyond its layers (model/step_collectives.hpp): Open MPI's
// choice of algorithm at the sizes the loss and the biases have (collective_rounds.hpp), the
// rounds each takes and which of them stay inside nodes, counted by hand, and the words against
// comm/volume.hpp's count of an all-reduce, worked out by hand for ResNet-50's loss and fc1000's
// bias at 64 ranks (the words docs/scale.md's runs measured).
#include "model/step_collectives.hpp"

#include <gtest/gtest.h>

#include "model/collective_rounds.hpp"
#include "model/machine_profile.hpp"

namespace convgrid {
namespace {

TEST(AllReduceAlgorithm, FollowsOpenMpisTable) {
  using A = AllReduce;
  EXPECT_EQ(all_reduce_algorithm(2, 1024), A::recursive_doubling);
  EXPECT_EQ(all_reduce_algorithm(3, 4), A::ring);
  EXPECT_EQ(all_reduce_algorithm(3, 1 << 20), A::rabenseifner);
  EXPECT_EQ(all_reduce_algorithm(20, 32), A::ring);  // the segmented ring
  EXPECT_EQ(all_reduce_algorithm(48, 4000), A::rabenseifner);
  EXPECT_EQ(all_reduce_algorithm(64, 1024), A::recursive_doubling);
  EXPECT_EQ(all_reduce_algorithm(64, 262144), A::rabenseifner);
  EXPECT_EQ(all_reduce_algorithm(128, 4000), A::reduce_broadcast);
  EXPECT_EQ(all_reduce_algorithm(256, 1024), A::reduce_broadcast);
  EXPECT_EQ(all_reduce_algorithm(256, 4096), A::rabenseifner);
  EXPECT_EQ(all_reduce_algorithm(1024, 1024), A::reduce_broadcast);
  EXPECT_EQ(all_reduce_algorithm(1024, 2048), A::recursive_doubling);
  EXPECT_EQ(all_reduce_algorithm(1024, 16384), A::rabenseifner);
  EXPECT_EQ(all_reduce_algorithm(2048, 3000), A::ring);
  EXPECT_EQ(all_reduce_algorithm(4096, 8192), A::ring);
  EXPECT_EQ(all_reduce_algorithm(4096, 20000), A::recursive_doubling);
}

TEST(AllReduceLoad, RoundsAndTheirLinks) {
  // 64 ranks, nodes of 8, 1 KB: recursive doubling at distances 1..32, the first three on nodes.
  const CommLoad rd = all_reduce_load(64, 256, 8);
  EXPECT_EQ(rd.messages, 6);
  EXPECT_DOUBLE_EQ(rd.node_steps, 3);
  EXPECT_DOUBLE_EQ(rd.network_steps, 3);
  EXPECT_EQ(rd.node_words, 3 * 256);
  EXPECT_EQ(rd.network_words, 3 * 256);
  // 256 ranks: a binomial reduce and a binomial broadcast, 8 rounds each, 3 of each on nodes.
  const CommLoad rb = all_reduce_load(256, 256, 8);
  EXPECT_EQ(rb.messages, 16);
  EXPECT_DOUBLE_EQ(rb.node_steps, 6);
  EXPECT_DOUBLE_EQ(rb.network_steps, 10);
  // Without a node level every round is the network's.
  const CommLoad flat = all_reduce_load(64, 256, 0);
  EXPECT_DOUBLE_EQ(flat.node_steps, 0);
  EXPECT_DOUBLE_EQ(flat.network_steps, 6);
  // 96 ranks (recursive doubling, not a power of two): the fold and the return pair neighbours
  // (on a node), the 6 exchanges between renumbered ranks are charged to the network.
  const CommLoad folded = all_reduce_load(96, 256, 8);
  EXPECT_EQ(folded.messages, 8);
  EXPECT_DOUBLE_EQ(folded.node_steps, 2);
  EXPECT_DOUBLE_EQ(folded.network_steps, 6);
  // 256 ranks, 4 KB: Rabenseifner, halving (2048 bytes with the nearest partner, then 1024, ...,
  // 16 with the farthest) and doubling back: 16 rounds, the 3 nearest of each half on nodes,
  // 2 * (4096 - 16) bytes.
  const CommLoad rab = all_reduce_load(256, 1024, 8);
  EXPECT_EQ(rab.messages, 16);
  EXPECT_DOUBLE_EQ(rab.node_steps, 6);
  EXPECT_EQ(rab.node_words + rab.network_words, 2 * (1024 - 4));
  // A ring over 3 ranks, all on one node: 4 rounds of a third.
  const CommLoad ring = all_reduce_load(3, 1, 8);
  EXPECT_EQ(ring.messages, 4);
  EXPECT_DOUBLE_EQ(ring.node_steps, 4);
  // One rank: nothing.
  EXPECT_EQ(all_reduce_load(1, 256, 8).messages, 0);
}

TEST(StepCollectives, WordsOfResNet50sLossAndBiasAt64Ranks) {
  const MachineProfile profile = load_profile("nvlink-gpu");
  // Loss at batch 256: all-reduces of 256, 512 and 256 floats; rank 0 holds 4, 8 and 4 of them
  // after the reduce-scatter: 63*4 + 252 + 63*8 + 504 + 63*4 + 252 = 2016.
  // fc1000's bias: 1000 floats, rank 0's block 16: 63*16 + 984 = 1992.
  const StepCollectives s = step_collectives(true, 256, {1000}, 64, profile);
  EXPECT_EQ(s.loss_words, 2016);
  EXPECT_EQ(s.bias_words, 1992);
  // Time: each all-reduce is recursive doubling, 3 rounds on NVLink (2 us) and 3 over the
  // network (5 us), plus its bytes.
  const double latency = 3 * profile.node.alpha_s + 3 * profile.alpha_s;
  EXPECT_GT(s.loss_time_s, 3 * latency);
  EXPECT_LT(s.loss_time_s, 3 * latency * 1.05);
  EXPECT_GT(s.bias_time_s, latency);
  EXPECT_LT(s.bias_time_s, latency * 1.05);
  // Inference or one rank: none; no loss layer: the biases alone.
  EXPECT_EQ(step_collectives(true, 256, {1000}, 1, profile).words(), 0);
  EXPECT_EQ(step_collectives(false, 256, {1000}, 64, profile).loss_words, 0);
}

}  // namespace
}  // namespace convgrid
