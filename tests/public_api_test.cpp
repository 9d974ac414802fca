// The public facades (include/convgrid/planner.hpp, cost_model.hpp, tensor_slice.hpp) give the
// internal figures unchanged: the planner's grid, words, bounds and memory on several layers,
// rank counts and limits; the cost model's words of every rank of every grid; slice coordinates.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "convgrid/cost_model.hpp"
#include "convgrid/planner.hpp"
#include "convgrid/tensor_slice.hpp"
#include "layout/layer_layout.hpp"
#include "model/grid_volume.hpp"
#include "model/lower_bound.hpp"
#include "model/volume_stats.hpp"
#include "plan/layer_planner.hpp"
#include "throws_input_error.hpp"

namespace convgrid {
namespace {

const char* kShapes[] = {
    "N=8,C=32,H=16,W=16,K=32,R=3,S=3,pad=1",
    "N=8,C=256,H=14,W=14,K=1024,R=1,S=1",
    "N=3,C=5,H=15,W=15,K=7,R=5,S=5,stride=2,pad=2",
};

PlanRequest request_of(int64_t ranks, const std::vector<Pass>& passes, std::optional<int64_t> limit = {}) {
  PlanRequest r;
  r.ranks = ranks;
  r.passes = passes;
  r.memory_limit_bytes = limit;
  return r;
}

void expect_same(const LayerPlanSummary& s, const LayerPlan& p) {
  EXPECT_EQ(s.grid, p.grid);
  EXPECT_EQ(s.algorithm, to_string(p.algorithm));
  EXPECT_EQ(s.panels, p.panels);
  EXPECT_EQ(s.words(), p.words());
  EXPECT_EQ(s.memory_bytes, p.memory_bytes);
  ASSERT_EQ(s.passes.size(), p.passes.size());
  for (size_t i = 0; i < p.passes.size(); ++i) {
    EXPECT_EQ(s.passes[i].pass, p.passes[i].pass);
    EXPECT_EQ(s.passes[i].busiest_rank_words, p.passes[i].volume.max_words);
    EXPECT_EQ(s.passes[i].mean_words, p.passes[i].volume.mean_words);
    EXPECT_EQ(s.passes[i].lower_bound_words, p.passes[i].lower_bound_words);
  }
}

TEST(PublicPlanner, EqualsTheInternalPlanner) {
  const std::vector<Pass> step{Pass::forward, Pass::backward_data, Pass::backward_weights};
  for (const char* text : kShapes) {
    const ConvShape shape = ConvShape::parse(text);
    for (int64_t P : {1, 4, 6, 16}) {
      for (const auto& passes : {std::vector<Pass>{Pass::forward}, step}) {
        SCOPED_TRACE(fmt::format("{} on {} ranks, {} passes", text, P, passes.size()));
        PlanOptions o;
        o.procs = P;
        o.passes = passes;
        const LayerPlanSummary s = plan_layer_for(shape, request_of(P, passes));
        expect_same(s, plan_layer(shape, o));
        EXPECT_EQ(s.grid.size(), P);
        EXPECT_NE(s.to_string().find(s.grid.to_string()), std::string::npos);
        expect_same(plan_layer_on(shape, s.grid, request_of(0, passes)), plan_on_grid(shape, s.grid, o));
      }
    }
  }
}

TEST(PublicPlanner, MemoryLimitAndErrors) {
  const ConvShape shape = ConvShape::parse(kShapes[1]);
  PlanOptions o;
  o.procs = 4;
  o.mem_per_rank_bytes = smallest_memory_bytes(shape, o);
  expect_same(plan_layer_for(shape, request_of(4, {Pass::forward}, o.mem_per_rank_bytes)), plan_layer(shape, o));
  EXPECT_TRUE(throws_input_error([&] { plan_layer_for(shape, request_of(4, {Pass::forward}, 1000)); }, {"per rank"}));
  EXPECT_TRUE(throws_input_error([&] { plan_layer_for(shape, request_of(0, {Pass::forward})); }, {"ranks 0"}));
}

TEST(PublicCostModel, EqualsTheInternalModelOnEveryRank) {
  for (const char* text : kShapes) {
    const ConvShape shape = ConvShape::parse(text);
    for (const GridDims& grid : all_grids(6)) {
      if (!grid.fits(shape)) continue;
      const LayerLayout layout(shape, grid);
      for (Pass p : {Pass::forward, Pass::backward_data, Pass::backward_weights}) {
        SCOPED_TRACE(fmt::format("{} on {}, {}", text, grid.to_string(), pass_name(p)));
        const GridCost cost = grid_cost(shape, grid, p);
        int64_t busiest = 0;
        for (int64_t r = 0; r < grid.size(); ++r) {
          const int64_t w = rank_words(shape, grid, r, p);
          EXPECT_EQ(w, grid_pass_volume(layout, grid.coord_of(r), p, Held{}).words());
          busiest = std::max(busiest, w);
        }
        EXPECT_EQ(cost.busiest_rank_words, busiest);
        EXPECT_EQ(cost.mean_words, pass_volume_stats(layout, p, Held{}).mean_words);
        EXPECT_EQ(cost.lower_bound_words, words_lower_bound(shape, 6));
      }
    }
  }
  const ConvShape shape = ConvShape::parse(kShapes[0]);
  EXPECT_EQ(lower_bound_words(shape, 8), words_lower_bound(shape, 8));
  EXPECT_TRUE(throws_input_error([&] { rank_words(shape, GridDims::parse("2,1,1,1,1"), 2, Pass::forward); },
                                 {"rank 2", "2,1,1,1,1"}));
}

TEST(PublicTensorSlice, CoordinatesFollowTheFlattening) {
  // The header's example: box n [0,2) c [4,6) y [0,3) x [0,3), flat [9,27).
  const TensorSlice t{{0, 4, 0, 0}, {2, 6, 3, 3}, 9, 27};
  EXPECT_EQ(t.size(), 18);
  EXPECT_EQ(t.coord(0), (std::array<int64_t, 4>{0, 5, 0, 0}));
  EXPECT_EQ(t.coord(17), (std::array<int64_t, 4>{1, 4, 2, 2}));
}

}  // namespace
}  // namespace convgrid
