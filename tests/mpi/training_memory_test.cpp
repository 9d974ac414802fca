// The whole training job's memory model (train/training_memory.hpp) against MemoryTracker under
// mpiexec: the small, residual, add and concat networks on many grids, with every layer
// unstreamed or streamed, hold after two SGD steps exactly the bytes the model gives for their
// rank (activations, parameters and momentum, staging, each layer's buffers), and everything is
// freed with the network.
#include "train/training_memory.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <vector>

#include "comm/communicator.hpp"
#include "convgrid/memory.hpp"
#include "io/seeded_tensor.hpp"
#include "small_network.hpp"
#include "train/dist_net.hpp"
#include "train/sgd.hpp"

namespace convgrid {
namespace {

using test_net::kBatch;

const std::vector<int32_t> kLabels = {0, 3, 4, 1, 2, 4};
const std::vector<float> kWeights = {1, 1, 1, 1, 1, 0};

// The plans on `grids`, each ungrouped layer streamed in `panels` panels when panels > 0.
std::vector<LayerPlan> plans_with_panels(const Network& net, const std::vector<GridDims>& grids,
                                         int64_t panels) {
  std::vector<LayerPlan> plans = test_net::plans_on(net, grids);
  if (panels == 0) return plans;
  PlanOptions o;
  o.procs = grids.front().size();
  for (LayerPlan& p : plans) {
    if (p.shape.groups == 1) p = evaluate_streamed(p.shape, p.grid, o, panels);  // grouped: grid only
  }
  return plans;
}

TEST(TrainingMemory, EqualsTheTrackedBytesOnEveryRank) {
  const Communicator world = Communicator::world();
  for (const Network& net : {test_net::small_net(), test_net::residual_net(), test_net::add_net(),
                             test_net::concat_net(), test_net::activation_net(), test_net::se_net()}) {
    SCOPED_TRACE(net.name());
    // At most 8 of the grid choices, spread over the list, each unstreamed or streamed in turn
    // (the residual network, seven layers with batch norm, the add network and the concat network
    // at most 4, the concat network's first with every layer on its most channel-split grid, the
    // activations and the squeeze-and-excitation 3: this test is the slowest of the suite, and it
    // runs twice, the second time with oneDNN held to AVX2)
    const size_t most = net.name() == "small" ? 8 : net.name() == "activation" || net.name() == "se" ? 3 : 4;
    const std::vector<std::vector<GridDims>> choices =
        net.name() == "concat" ? test_net::some_grid_choices(net, world.size(), most - 1)
                               : test_net::grid_choices(net, world.size());
    const size_t stride = net.name() == "concat" ? 1 : (choices.size() + most - 1) / most;
    int cases = 0;
    for (size_t c = 0; c < choices.size(); c += stride) {
      const std::vector<GridDims>& grids = choices[c];
      const int64_t panels = std::vector<int64_t>{0, 1, 3}[c / stride % 3];
      {
        std::string text;
        for (const GridDims& g : grids) text += g.to_string() + " ";
        SCOPED_TRACE(fmt::format("rank {}, grids {}, panels {}", world.rank(), text, panels));
        const std::vector<LayerPlan> plans = plans_with_panels(net, grids, panels);
        const TrainingMemory model =
            training_memory(net, plans, kBatch, world.size(), world.rank());
        const int64_t before = MemoryTracker::current_bytes();
        MemoryTracker::reset_peak();
        {
          DistNet d(net, plans, kBatch, world, 5);
          Sgd sgd(d.params(), SgdOptions{});
          for (int step = 0; step < 2; ++step) {
            fill_seeded(d.input_slice(), d.input_tensor(), 7 + step, TensorStream::input,
                        d.input());
            d.step(kLabels, kWeights, true);
            sgd.step(d.params());
          }
          EXPECT_EQ(MemoryTracker::current_bytes() - before, model.total());
          EXPECT_EQ(MemoryTracker::peak_bytes() - before, model.total());
        }
        EXPECT_EQ(MemoryTracker::current_bytes(), before);
        EXPECT_GT(model.activations, 0);
        EXPECT_GT(model.parameters, 0);
        ++cases;
      }
    }
    EXPECT_GE(cases, 2);
  }
}

}  // namespace
}  // namespace convgrid
