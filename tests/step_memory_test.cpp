// The step's memory plan (train/step_memory.hpp): the interval placement never overlaps two
// blocks whose lives meet, and on resnet-fmnist the arena reuses bytes: the lives come from the
// graph, with every activation buffer inside the step and each output's gradient zeroed as its
// life begins. That the lives are long enough is checked where the network runs
// (tests/mpi/dist_net_test.cpp poisons every buffer as its life begins).
#include "train/step_memory.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "nn/builtin_networks.hpp"
#include "plan/network_planner.hpp"

namespace convgrid {
namespace {

TEST(StepMemory, PlacedBlocksWhoseLivesMeetDoNotOverlap) {
  std::mt19937 gen(5);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<Interval> blocks;
    const int n = 1 + static_cast<int>(gen() % 40);
    for (int i = 0; i < n; ++i) {
      const int a = static_cast<int>(gen() % 30), b = static_cast<int>(gen() % 30);
      blocks.push_back({kArenaAlign * (1 + static_cast<int64_t>(gen() % 16)), std::min(a, b), std::max(a, b)});
    }
    int64_t total = 0;
    const std::vector<int64_t> at = place_intervals(blocks, &total);
    int64_t sum = 0, peak = 0;
    for (int t = 0; t < 30; ++t) {
      int64_t live = 0;
      for (const Interval& b : blocks) live += b.first <= t && t <= b.last ? b.bytes : 0;
      peak = std::max(peak, live);
    }
    for (size_t i = 0; i < blocks.size(); ++i) {
      sum += blocks[i].bytes;
      EXPECT_EQ(at[i] % kArenaAlign, 0);
      EXPECT_LE(at[i] + blocks[i].bytes, total);
      for (size_t j = 0; j < i; ++j) {
        const bool meet = blocks[i].first <= blocks[j].last && blocks[j].first <= blocks[i].last;
        const bool overlap = at[i] < at[j] + blocks[j].bytes && at[j] < at[i] + blocks[i].bytes;
        EXPECT_FALSE(meet && overlap) << "trial " << trial << " blocks " << i << " and " << j;
      }
    }
    EXPECT_GE(total, peak);
    EXPECT_LE(total, sum);
  }
}

TEST(StepMemory, BlocksLivingAtDifferentTimesShareBytes) {
  int64_t total = 0;
  const std::vector<int64_t> at = place_intervals({{128, 0, 1}, {64, 2, 3}, {64, 1, 2}}, &total);
  EXPECT_EQ(total, 192);  // the first two share, the third lies beside them
  EXPECT_EQ(at[0], 0);
  EXPECT_EQ(at[1], 0);
  EXPECT_EQ(at[2], 128);
}

TEST(StepMemory, ResnetFmnistArenaReusesBytes) {
  const Network net = builtin_network("resnet-fmnist");
  NetworkPlanOptions o;
  o.batch = 64;
  o.layer.procs = 1;
  const TrainGraph graph(net, plan_network(net, o).layer_plans(), o.batch, 1, 0);
  const StepMemoryPlan plan = plan_step_memory(graph);
  const int steps = 2 * static_cast<int>(graph.nodes().size());
  ASSERT_FALSE(plan.slots.empty());
  for (const ArenaSlot& s : plan.slots) {
    const std::string what = graph.nodes()[s.node].layer->name() + " " +
                             graph.nodes()[s.node].layer->buffers()[s.buffer].role;
    EXPECT_LE(0, s.life.first) << what;
    EXPECT_LE(s.life.first, s.life.last) << what;
    EXPECT_LT(s.life.last, steps) << what;
    EXPECT_EQ(s.zero_at_first, graph.nodes()[s.node].layer->buffers()[s.buffer].role == "dout") << what;
    EXPECT_EQ(s.kind == Life::output_grad, s.zero_at_first) << what;
  }
  EXPECT_GE(plan.arena_bytes, plan.live_peak_bytes);
  // Gradients live in backward only, most values die in it: the arena is at most 60% of the
  // buffers added up (measured: see docs/training.md).
  EXPECT_LT(plan.arena_bytes, plan.described_bytes * 6 / 10);
}

}  // namespace
}  // namespace convgrid
