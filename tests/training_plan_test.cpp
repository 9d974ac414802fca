// Planning training under a memory limit on the whole job (train/training_plan.hpp): the plans
// found fit the limit by the model of the job; a limit under every plan set is refused with the
// least the job needs, and that least is itself a limit that plans; no limit gives the planner's
// unconstrained plans. On given grids, layers stream on their grids until the job fits.
#include "train/training_plan.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "convgrid/error.hpp"
#include "nn/builtin_networks.hpp"

namespace convgrid {
namespace {

NetworkPlanOptions fmnist_options(int64_t procs, std::optional<int64_t> limit) {
  NetworkPlanOptions o;
  o.layer.procs = procs;
  o.layer.passes = {Pass::forward, Pass::backward_data, Pass::backward_weights};
  o.layer.mem_per_rank_bytes = limit;
  o.batch = 32;
  return o;
}

TEST(TrainingPlan, NoLimitGivesTheUnconstrainedPlans) {
  const Network net = builtin_network("fmnist");
  const TrainingPlan t = plan_training(net, fmnist_options(2, std::nullopt));
  const NetworkPlan p = plan_network(net, fmnist_options(2, std::nullopt));
  ASSERT_EQ(t.plan.layers.size(), p.layers.size());
  for (size_t i = 0; i < p.layers.size(); ++i) {
    EXPECT_EQ(t.plan.layers[i].plan.grid, p.layers[i].plan.grid);
    EXPECT_EQ(t.plan.layers[i].plan.panels, 0);
  }
  EXPECT_EQ(t.memory.total(), t.unconstrained.total());
  EXPECT_EQ(t.memory.total(), busiest_training_memory(net, t.plan.layer_plans(), 32, 2).total());
}

TEST(TrainingPlan, FitsTheWholeJobUnderTheLimit) {
  const Network net = builtin_network("fmnist");
  for (int64_t procs : {1, 2, 4}) {
    SCOPED_TRACE(procs);
    const int64_t unconstrained =
        plan_training(net, fmnist_options(procs, std::nullopt)).memory.total();
    const int64_t limit = unconstrained * 3 / 4;
    const TrainingPlan t = plan_training(net, fmnist_options(procs, limit));
    EXPECT_LE(t.memory.total(), limit);
    EXPECT_EQ(t.memory.total(),
              busiest_training_memory(net, t.plan.layer_plans(), 32, procs).total());
    EXPECT_EQ(t.unconstrained.total(), unconstrained);
    bool leaner = false;  // some layer streams or changed its grid
    for (const NetworkLayerPlan& l : t.plan.layers) leaner = leaner || l.plan.panels > 0;
    EXPECT_TRUE(leaner);
    // Every layer's plan is under its own limit.
    ASSERT_EQ(t.layer_limits.size(), t.plan.layers.size());
    for (size_t i = 0; i < t.plan.layers.size(); ++i) {
      if (t.layer_limits[i] > 0) {
        EXPECT_LE(t.plan.layers[i].plan.memory_bytes, t.layer_limits[i]);
      }
    }
  }
}

TEST(TrainingPlan, RefusesWithTheLeastAndTheLeastPlans) {
  const Network net = builtin_network("fmnist");
  std::string message;
  try {
    plan_training(net, fmnist_options(2, int64_t{5} << 20));
    FAIL() << "5 MiB per rank planned";
  } catch (const InputError& e) {
    message = e.what();
  }
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      message, m,
      std::regex(
          R"(--mem-per-rank 5\.0 MiB: training fmnist at batch 32 on 2 ranks needs at least [0-9.]+ MiB \(([0-9]+) bytes\))")))
      << message;
  const int64_t least = std::stoll(m[1]);
  const TrainingPlan t = plan_training(net, fmnist_options(2, least));
  EXPECT_EQ(t.memory.total(), least);
  EXPECT_LT(least, t.unconstrained.total());
  EXPECT_THROW(plan_training(net, fmnist_options(2, least - 1)), InputError);
}

TEST(TrainingPlan, StreamsOnGivenGridsUntilTheJobFits) {
  const Network net = builtin_network("fmnist");
  NetworkPlanOptions o = fmnist_options(2, std::nullopt);
  std::vector<LayerPlan> plans = plan_network(net, o).layer_plans();
  const GridDims spatial{1, 1, 1, 2, 1};
  for (LayerPlan& p : plans) {
    if (spatial.fits(p.shape)) p = evaluate_grid(p.shape, spatial, o.layer);
  }
  const int64_t start = busiest_training_memory(net, plans, 32, 2).total();
  EXPECT_EQ(fit_training_on_grids(net, plans, o).size(), plans.size());  // no limit: as given
  o.layer.mem_per_rank_bytes = start * 3 / 4;
  const std::vector<LayerPlan> fitted = fit_training_on_grids(net, plans, o);
  ASSERT_EQ(fitted.size(), plans.size());
  bool streamed = false;
  for (size_t i = 0; i < plans.size(); ++i) {
    EXPECT_EQ(fitted[i].grid, plans[i].grid);
    streamed = streamed || fitted[i].panels > 0;
  }
  EXPECT_TRUE(streamed);
  EXPECT_LE(busiest_training_memory(net, fitted, 32, 2).total(), *o.layer.mem_per_rank_bytes);

  o.layer.mem_per_rank_bytes = int64_t{5} << 20;
  std::string message;
  try {
    fit_training_on_grids(net, plans, o);
  } catch (const InputError& e) {
    message = e.what();
  }
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      message, m, std::regex(R"(on these grids needs at least [0-9.]+ MiB \(([0-9]+) bytes\))")))
      << message;
  o.layer.mem_per_rank_bytes = std::stoll(m[1]);
  EXPECT_EQ(busiest_training_memory(net, fit_training_on_grids(net, plans, o), 32, 2).total(),
            std::stoll(m[1]));
}

}  // namespace
}  // namespace convgrid
