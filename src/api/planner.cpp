// The public planner (convgrid/planner.hpp) on the internal one (plan/layer_planner): the
// request becomes PlanOptions with the volume objective, the LayerPlan a plain summary.
#include "convgrid/planner.hpp"

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "memory/byte_sizes.hpp"
#include "plan/layer_planner.hpp"

namespace convgrid {
namespace {

PlanOptions options_of(const PlanRequest& r, int64_t procs) {
  PlanOptions o;
  o.procs = procs;
  o.passes = r.passes;
  o.objective = Objective::volume;
  o.mem_per_rank_bytes = r.memory_limit_bytes;
  o.allow_streaming = r.allow_streaming;
  return o;
}

LayerPlanSummary summary_of(const LayerPlan& plan) {
  LayerPlanSummary s{plan.shape, plan.grid, std::string(to_string(plan.algorithm)), plan.panels, {},
                     plan.memory_bytes};
  for (const PassFigures& f : plan.passes) {
    s.passes.push_back({f.pass, f.volume.max_words, f.volume.mean_words, f.lower_bound_words});
  }
  return s;
}

}  // namespace

int64_t LayerPlanSummary::words() const {
  int64_t w = 0;
  for (const PassSummary& p : passes) w += p.busiest_rank_words;
  return w;
}

double LayerPlanSummary::lower_bound_words() const {
  double w = 0;
  for (const PassSummary& p : passes) w += p.lower_bound_words;
  return w;
}

std::string LayerPlanSummary::to_string() const {
  const std::string how = panels > 0 ? fmt::format("{} algorithm, {} panels", algorithm, panels)
                                     : fmt::format("{} algorithm", algorithm);
  return fmt::format("grid {} ({}): {} words on the busiest rank, lower bound {:.0f}, {} a rank",
                     grid.to_string(), how, words(), lower_bound_words(), format_bytes(memory_bytes));
}

LayerPlanSummary plan_layer_for(const ConvShape& shape, const PlanRequest& request) {
  if (request.ranks < 1) throw InputError(fmt::format("plan_layer_for: ranks {} must be at least 1", request.ranks));
  return summary_of(plan_layer(shape, options_of(request, request.ranks)));
}

LayerPlanSummary plan_layer_on(const ConvShape& shape, const GridDims& grid, const PlanRequest& request) {
  return summary_of(plan_on_grid(shape, grid, options_of(request, grid.size())));
}

}  // namespace convgrid
