// Exhaustive, pruned search over the grids of one layer.
#include "plan/layer_planner.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "model/grid_memory.hpp"
#include "model/lower_bound.hpp"
#include "model/pass_cost.hpp"
#include "model/streamed_memory.hpp"
#include "model/streamed_volume.hpp"

namespace convgrid {

std::string_view to_string(ConvAlgorithm algorithm) {
  switch (algorithm) {
    case ConvAlgorithm::grid:
      return "grid";
    case ConvAlgorithm::streamed:
      return "streamed";
    case ConvAlgorithm::reproducible:
      return "reproducible";
  }
  return "unknown";
}

namespace {

// A lower estimate of a grid's objective from the exact means over ranks.
double mean_objective(const ConvShape& shape, const GridDims& grid, const PlanOptions& o) {
  const LayerLayout L(shape, grid);
  Held held;
  double sum = 0;
  for (Pass p : o.passes) {
    const VolumeStats m = pass_volume_mean(L, p, held);
    held = held_after(p, held);
    if (o.objective == Objective::volume) {
      sum += m.mean_words;
    } else {
      // pass_time grows with each argument, and means (rounded down) never exceed the largest;
      // words are charged at the cheaper link, rounds not at all.
      CommLoad mean;
      mean.messages = static_cast<int64_t>(std::floor(m.mean_messages));
      const bool node_cheaper = o.profile.node.ranks > 0 && o.profile.node.beta_s_per_byte < o.profile.beta_s_per_byte;
      (node_cheaper ? mean.node_words : mean.network_words) = static_cast<int64_t>(std::floor(m.mean_words));
      sum += pass_time(o.profile, mean, shape.flops() / static_cast<double>(grid.size()));
    }
  }
  return sum;
}

}  // namespace

std::vector<Pass> LayerPlan::pass_list() const {
  std::vector<Pass> list;
  for (const PassFigures& f : passes) list.push_back(f.pass);
  return list;
}

int64_t LayerPlan::words() const {
  int64_t w = 0;
  for (const PassFigures& p : passes) w += p.volume.max_words;
  return w;
}

double LayerPlan::time_s() const {
  double t = 0;
  for (const PassFigures& p : passes) t += p.time_s;
  return t;
}

LayerPlan evaluate_grid(const ConvShape& shape, const GridDims& grid, const PlanOptions& o) {
  const LayerLayout L(shape, grid);
  LayerPlan plan{shape, grid, ConvAlgorithm::grid, 0, {}, 0};
  const double flops = local_flops(L, GridCoord{});  // rank 0 has the largest block
  Held held;
  for (size_t i = 0; i < o.passes.size(); ++i) {
    const Pass p = o.passes[i];
    PassFigures f{p, pass_volume_stats(L, p, held, o.profile.node.ranks),
                  words_lower_bound_in_step(shape, grid.size(), o.passes, i), 0};
    held = held_after(p, held);
    // The grid algorithm's gathers, kernel and reduce-scatter wait on each other: its transfers
    // never hide behind the kernel, whatever the profile allows the streamed algorithm's panels.
    f.time_s = pass_time_in_sequence(o.profile, f.volume.max_load, flops);
    plan.passes.push_back(f);
  }
  for (const GridCoord& g : representative_ranks(L)) {
    plan.memory_bytes = std::max(plan.memory_bytes, grid_memory_bytes(L, g, o.passes, o.engine));
  }
  return plan;
}

LayerPlan evaluate_streamed(const ConvShape& shape, const GridDims& grid, const PlanOptions& o,
                            int64_t panels) {
  const LayerLayout L(shape, grid);
  LayerPlan plan{shape, grid, ConvAlgorithm::streamed, panels, {}, 0};
  const double flops = local_flops(L, GridCoord{});
  const std::vector<GridCoord> ranks = representative_ranks(L, o.profile.node.ranks);
  for (size_t i = 0; i < o.passes.size(); ++i) {
    const Pass p = o.passes[i];
    PassFigures f{p, pass_volume_stats(L, p, Held{}), words_lower_bound_in_step(shape, grid.size(), o.passes, i), 0};
    f.volume.max_messages = 0;
    f.volume.max_load = {};
    double messages = 0;
    for (const GridCoord& g : ranks) {
      const PassVolume v = streamed_pass_volume(L, g, p, panels, o.profile.node.ranks);
      f.volume.max_messages = std::max(f.volume.max_messages, v.messages);
      f.volume.max_load = f.volume.max_load.max_with(CommLoad::of(v));
      messages = std::max(messages, static_cast<double>(v.messages));
    }
    f.volume.mean_messages = messages;  // the largest: panels add messages on every rank alike
    f.time_s = pass_time(o.profile, f.volume.max_load, flops);
    plan.passes.push_back(f);
  }
  for (const GridCoord& g : ranks) {
    plan.memory_bytes = std::max(plan.memory_bytes, streamed_memory_bytes(L, g, o.passes, panels, o.stream_pieces, o.engine));
  }
  return plan;
}

namespace {

// The panel counts worth trying on a grid: powers of two up to the largest reduction range of
// the passes (rank 0's blocks are the largest), and that range itself (panels of one).
std::vector<int64_t> panel_choices(const ConvShape& shape, const GridDims& grid, const PlanOptions& o) {
  const LayerLayout L(shape, grid);
  int64_t most = 1;
  for (Pass p : o.passes) {
    const Range r = p == Pass::forward ? L.c_block(0, 0) : p == Pass::backward_data ? L.k_block(0) : L.n_block(0);
    most = std::max(most, r.size());
  }
  std::vector<int64_t> b;
  for (int64_t v = 1; v < most; v *= 2) b.push_back(v);
  b.push_back(most);
  return b;
}

// Whether the streamed algorithm is a candidate: allowed, and the layer not grouped (it does not
// run grouped layers).
bool may_stream(const ConvShape& shape, const PlanOptions& o) { return o.allow_streaming && shape.groups == 1; }

// The plan of a grid under the memory limit: the grid algorithm when it fits, else the streamed
// one with the fewest panels that fits; none when neither does.
std::optional<LayerPlan> fitting_plan(const ConvShape& shape, const GridDims& grid, const PlanOptions& o) {
  LayerPlan plan = evaluate_grid(shape, grid, o);
  if (!o.mem_per_rank_bytes || plan.memory_bytes <= *o.mem_per_rank_bytes) return plan;
  if (!may_stream(shape, o)) return std::nullopt;
  for (int64_t b : panel_choices(shape, grid, o)) {
    LayerPlan streamed = evaluate_streamed(shape, grid, o, b);
    if (streamed.memory_bytes <= *o.mem_per_rank_bytes) return streamed;
  }
  return std::nullopt;
}

// The least memory of a grid over the grid algorithm and every panel count fitting_plan tries
// (memory need not fall with every extra panel), so that a limit of it has a plan.
int64_t least_memory(const ConvShape& shape, const GridDims& grid, const PlanOptions& o) {
  int64_t m = evaluate_grid(shape, grid, o).memory_bytes;
  if (may_stream(shape, o)) {
    for (int64_t b : panel_choices(shape, grid, o)) {
      m = std::min(m, evaluate_streamed(shape, grid, o, b).memory_bytes);
    }
  }
  return m;
}

struct Candidate {
  double estimate;
  size_t order;
  GridDims grid;
};

// The grids of P ranks that fit the layer and that `allowed` accepts, by increasing estimate and
// then in tie-break order; InputError when there is none.
std::vector<Candidate> candidate_grids(const ConvShape& shape, const PlanOptions& o,
                                       const GridFilter& allowed) {
  if (o.procs < 1) throw InputError(fmt::format("--procs {} must be at least 1", o.procs));
  std::vector<Candidate> candidates;
  // Ties go to the grid with more batch parallelism, then more k, c, h (all_grids reversed):
  // data parallelism is what users know, and it moves no activations.
  std::vector<GridDims> grids = all_grids(o.procs);
  std::reverse(grids.begin(), grids.end());
  for (size_t i = 0; i < grids.size(); ++i) {
    if (grids[i].fits(shape) && (!allowed || allowed(grids[i]))) {
      candidates.push_back({mean_objective(shape, grids[i], o), i, grids[i]});
    }
  }
  if (candidates.empty()) {
    throw InputError(fmt::format("no grid of {} ranks{} fits the layer {} (Pn,Pk,Pc,Ph,Pw may not "
                                 "exceed N,K,C,Ho,Wo{})", o.procs, allowed ? " of the family" : "",
                                 shape.to_string(), shape.groups == 1 ? "" : "; with groups Pk is below G with Pc = 1, or a multiple of G"));
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.estimate != b.estimate ? a.estimate < b.estimate : a.order < b.order;
  });
  return candidates;
}

int64_t smallest_memory(const ConvShape& shape, const PlanOptions& o, const std::vector<Candidate>& candidates) {
  int64_t smallest = std::numeric_limits<int64_t>::max();
  for (const Candidate& c : candidates) smallest = std::min(smallest, least_memory(shape, c.grid, o));
  return smallest;
}

}  // namespace

int64_t smallest_memory_bytes(const ConvShape& shape, const PlanOptions& o, const GridFilter& allowed) {
  return smallest_memory(shape, o, candidate_grids(shape, o, allowed));
}

std::vector<LayerPlan> best_layer_plans(const ConvShape& shape, const PlanOptions& o, size_t count,
                                        const GridFilter& allowed) {
  const std::vector<Candidate> candidates = candidate_grids(shape, o, allowed);
  // The kept plans, best first (objective, then grid order).
  std::vector<std::pair<LayerPlan, size_t>> kept;
  const auto worse = [&](const std::pair<LayerPlan, size_t>& a, const std::pair<LayerPlan, size_t>& b) {
    const double va = a.first.objective(o.objective), vb = b.first.objective(o.objective);
    return va != vb ? va < vb : a.second < b.second;
  };
  for (const Candidate& c : candidates) {
    // The estimate never exceeds the objective: stop once it passes the last kept plan (ties are
    // kept, to be broken by grid order).
    if (kept.size() == count && c.estimate > kept.back().first.objective(o.objective) * (1 + 1e-12)) break;
    std::optional<LayerPlan> plan = fitting_plan(shape, c.grid, o);
    if (!plan) continue;
    std::pair<LayerPlan, size_t> entry{std::move(*plan), c.order};
    kept.insert(std::upper_bound(kept.begin(), kept.end(), entry, worse), std::move(entry));
    if (kept.size() > count) kept.pop_back();
  }
  if (kept.empty()) {
    const int64_t smallest = smallest_memory(shape, o, candidates);
    throw InputError(fmt::format("no grid of {} ranks fits the layer {} in {} per rank; the "
                                 "smallest limit that works is {} ({} bytes)",
                                 o.procs, shape.to_string(), format_bytes(*o.mem_per_rank_bytes),
                                 format_bytes(smallest), smallest));
  }
  std::vector<LayerPlan> best;
  for (auto& [plan, order] : kept) best.push_back(std::move(plan));
  return best;
}

std::vector<LayerPlan> memory_tradeoff(const ConvShape& shape, const PlanOptions& o) {
  std::vector<LayerPlan> plans;
  for (const Candidate& c : candidate_grids(shape, o, {})) {
    plans.push_back(evaluate_grid(shape, c.grid, o));
    if (shape.groups != 1) continue;
    for (int64_t b : panel_choices(shape, c.grid, o)) plans.push_back(evaluate_streamed(shape, c.grid, o, b));
  }
  return plans;
}

LayerPlan plan_on_grid(const ConvShape& shape, const GridDims& grid, const PlanOptions& o) {
  std::optional<LayerPlan> plan = fitting_plan(shape, grid, o);
  if (!plan) {
    const int64_t least = least_memory(shape, grid, o);
    throw InputError(fmt::format("grid {} does not fit the layer {} in {} per rank; it needs at least {} "
                                 "({} bytes)", grid.to_string(), shape.to_string(),
                                 format_bytes(*o.mem_per_rank_bytes), format_bytes(least), least));
  }
  return *plan;
}

LayerPlan plan_layer(const ConvShape& shape, const PlanOptions& o) {
  return best_layer_plans(shape, o, 1).front();
}

}  // namespace convgrid
