// The per-rank memory limit (convgrid/memory.hpp): allocations up to the limit succeed and one
// byte more is refused before anything is allocated or counted, with one line naming the open
// MemoryScopes and the bytes; and on fmnist on one rank, DistNet with SGD runs under a limit of
// exactly its modelled bytes, while a byte less, or a limit inside its construction, stops it
// with an error naming the layer or the activation arena. Nothing tracked outlives a test; the
// figures are relative to the bytes held when a test starts, but for the one whole message.
#include "convgrid/memory.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "convgrid/error.hpp"
#include "nn/builtin_networks.hpp"
#include "one_rank_mpi.hpp"
#include "train/dist_net.hpp"
#include "train/sgd.hpp"
#include "train/step_memory.hpp"
#include "train/train_graph.hpp"
#include "train/training_memory.hpp"
#include "train/training_plan.hpp"

namespace convgrid {
namespace {

int64_t now() { return MemoryTracker::current_bytes(); }
int64_t peak() { return MemoryTracker::peak_bytes(); }

// The message of the Error `allocate` throws ("" when it throws none).
template <class Allocate>
std::string refusal(Allocate&& allocate) {
  try {
    allocate();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

::testing::AssertionResult starts_with(const std::string& text, const std::string& start) {
  if (text.starts_with(start)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not start with '" << start << "'";
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

TEST(MemoryLimit, NoneByDefaultAndNoneRefusesNothing) {
  EXPECT_EQ(MemoryTracker::limit(), std::nullopt);
  const ScopedMemoryLimit none(std::nullopt);
  EXPECT_NO_THROW(Buffer(int64_t{1} << 20));
  EXPECT_NO_THROW(TrackedVector<double>(1 << 17));
}

TEST(MemoryLimit, ScopedLimitPutsTheOneBeforeBack) {
  {
    const ScopedMemoryLimit outer(1000);
    EXPECT_EQ(MemoryTracker::limit(), 1000);
    {
      const ScopedMemoryLimit inner(std::nullopt);
      EXPECT_EQ(MemoryTracker::limit(), std::nullopt);
    }
    EXPECT_EQ(MemoryTracker::limit(), 1000);
  }
  EXPECT_EQ(MemoryTracker::limit(), std::nullopt);
  EXPECT_THROW(ScopedMemoryLimit(-1), Error);
  EXPECT_EQ(MemoryTracker::limit(), std::nullopt);
}

TEST(MemoryLimit, UpToTheLimitSucceedsAndOneByteMoreIsRefused) {
  const int64_t base = now();
  {
    const ScopedMemoryLimit limit(base + 4000);
    Buffer exact(1000);
    EXPECT_EQ(now(), base + 4000);
  }
  {
    const ScopedMemoryLimit limit(base + 3999);
    EXPECT_THROW(Buffer(1000), Error);
  }
  {
    const ScopedMemoryLimit limit(base + 100);
    TrackedVector<char> exact(100);
    EXPECT_THROW(TrackedVector<char>(1), Error);
  }
  {
    const ScopedMemoryLimit limit(base + 100);
    EXPECT_THROW(TrackedVector<char>(101), Error);
  }
  EXPECT_EQ(now(), base);
}

TEST(MemoryLimit, MessageNamesTheScopeAndTheBytes) {
  ASSERT_EQ(now(), 0) << "a test left tracked bytes behind";
  const ScopedMemoryLimit limit(int64_t{1} << 20);
  const Buffer held(150'000);  // 600,000 bytes
  const MemoryScope scope("layer 'conv1' (conv)");
  EXPECT_EQ(refusal([] { Buffer(125'000); }),
            "memory limit: layer 'conv1' (conv) asks for 500,000 bytes while this rank holds "
            "600,000; --mem-per-rank 1.0 MiB (1,048,576 bytes) would be exceeded by 51,424 bytes");
}

TEST(MemoryLimit, AnAllocationOutsideEveryScopeIsUnnamed) {
  const int64_t base = now();
  const ScopedMemoryLimit limit(base + 10);
  EXPECT_TRUE(starts_with(refusal([] { TrackedVector<int32_t>(3); }),
                          "memory limit: unnamed allocation asks for 12 bytes"));
}

TEST(MemoryLimit, ARefusalChangesNoCounter) {
  const int64_t base = now();
  const Buffer held(100);
  MemoryTracker::reset_peak();
  const ScopedMemoryLimit limit(base + 1000);
  EXPECT_THROW(Buffer(250), Error);
  EXPECT_THROW(TrackedVector<float>(250), Error);
  EXPECT_EQ(now(), base + 400);
  EXPECT_EQ(peak(), base + 400);
  Buffer rest(150);  // the refused bytes were not counted: exactly the limit is still left
  EXPECT_EQ(now(), base + 1000);
}

TEST(MemoryLimit, TrackedVectorGrowthOverTheLimitIsRefused) {
  const int64_t base = now();
  const ScopedMemoryLimit limit(base + 1000);
  TrackedVector<float> v;
  v.reserve(100);  // 400 bytes
  v.resize(100, 1.0f);
  // Growing to 200 floats holds the old 400 bytes and the new 800 while it copies.
  EXPECT_TRUE(contains(refusal([&] { v.resize(200); }),
                       "asks for 800 bytes while this rank holds 400; "));
  EXPECT_EQ(v.size(), 100u);
  EXPECT_EQ(v.capacity(), 100u);
  EXPECT_EQ(now(), base + 400);
}

TEST(MemoryLimit, NestedScopesAreNamedOutermostFirst) {
  EXPECT_EQ(MemoryScope::open_names(), "");
  const int64_t base = now();
  const ScopedMemoryLimit limit(base);
  const std::string layer = "conv2";
  {
    const MemoryScope outer("training step");
    EXPECT_EQ(MemoryScope::open_names(), "training step");
    {
      const MemoryScope inner("layer '", layer, "' (", "conv", ") forward");
      EXPECT_TRUE(starts_with(refusal([] { Buffer(1); }),
                              "memory limit: training step > layer 'conv2' (conv) forward asks "
                              "for 4 bytes while this rank holds "));
    }
    EXPECT_TRUE(starts_with(refusal([] { Buffer(1); }), "memory limit: training step asks"));
  }
  EXPECT_EQ(MemoryScope::open_names(), "");
}

// fmnist on one rank at a small batch, planned as the training job plans it.
struct OneRankFmnist {
  Network net = builtin_network("fmnist");
  int64_t batch = 4;
  std::vector<LayerPlan> plans;
  TrainingMemory model;
  int64_t arena_bytes = 0;

  OneRankFmnist() {
    NetworkPlanOptions o;
    o.layer.procs = 1;
    o.layer.passes = {Pass::forward, Pass::backward_data, Pass::backward_weights};
    o.batch = batch;
    plans = plan_training(net, o).plan.layer_plans();
    model = training_memory(net, plans, batch, 1, 0);
    arena_bytes = plan_step_memory(TrainGraph(net, plans, batch, 1, 0)).arena_bytes;
  }

  // Builds the network and its optimiser and trains two steps, as the training job does.
  void train(const Communicator& world) const {
    DistNet d(net, plans, batch, world, 5);
    Sgd sgd(d.params(), SgdOptions{});
    const std::vector<int32_t> labels(static_cast<size_t>(batch), 1);
    const std::vector<float> weights(static_cast<size_t>(batch), 1.0f);
    for (int step = 0; step < 2; ++step) {
      d.step(labels, weights, true);
      sgd.step(d.params());
    }
  }
};

TEST(MemoryLimit, TrainingFitsALimitOfExactlyItsModelledBytes) {
  const Communicator world = Communicator::world();
  const OneRankFmnist f;
  const int64_t base = now();
  MemoryTracker::reset_peak();
  {
    const ScopedMemoryLimit limit(base + f.model.total());
    EXPECT_NO_THROW(f.train(world));
  }
  EXPECT_EQ(peak() - base, f.model.total());
  // A byte less: the allocation that reaches the peak is refused by that byte.
  {
    const ScopedMemoryLimit limit(base + f.model.total() - 1);
    const std::string error = refusal([&] { f.train(world); });
    EXPECT_TRUE(starts_with(error, "memory limit: layer '"));
    EXPECT_TRUE(error.ends_with(" would be exceeded by 1 byte")) << error;
  }
  EXPECT_EQ(now(), base);
}

TEST(MemoryLimit, BuildingTheNetworkNamesTheArenaOrTheLayer) {
  const Communicator world = Communicator::world();
  const OneRankFmnist f;
  const int64_t base = now();
  ASSERT_GT(f.arena_bytes, 0);
  {
    const ScopedMemoryLimit limit(base + f.arena_bytes - 1);
    EXPECT_TRUE(starts_with(refusal([&] { f.train(world); }),
                            fmt::format("memory limit: activation arena asks for {} bytes",
                                        fmt::group_digits(f.arena_bytes))));
  }
  {
    // The arena fits exactly; the first layer's weights do not.
    const ScopedMemoryLimit limit(base + f.arena_bytes);
    EXPECT_TRUE(starts_with(refusal([&] { f.train(world); }),
                            "memory limit: layer 'conv1' (conv) asks for "));
  }
  EXPECT_EQ(now(), base);
}

}  // namespace
}  // namespace convgrid
