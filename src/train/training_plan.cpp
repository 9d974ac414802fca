// The memory search of train/training_plan.hpp: a greedy descent down each layer's ladder of
// plans, rung by rung (on the planner's grids, or on fixed ones).
#include "train/training_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "convgrid/error.hpp"

namespace convgrid {
namespace {

// The memory of layer i's plan under a limit (none when nothing fits under it).
using BestUnder = std::function<std::optional<int64_t>(size_t, int64_t)>;
// The busiest rank's job when each layer is planned under its limit (0: none).
using JobUnder = std::function<TrainingMemory(const std::vector<int64_t>&)>;

struct Descent {
  std::optional<std::vector<int64_t>> limits;  // the layer limits that fit, if any
  TrainingMemory memory;
  int64_t least = 0;  // the least job seen, the start's included
};

// The greedy descent. Layer i starts at its unconstrained plan (memory top[i]); its next rung is
// its plan under one byte less than the current one's memory. Each step moves down the layer
// whose next rung saves the most (the first of equals) and asks for the job, until it fits
// `limit` or every layer is at its leanest. Large savings come before many panels that save
// little, and the path does not depend on the limit.
Descent descend(const std::vector<int64_t>& top, int64_t limit, int64_t start,
                const BestUnder& best_under, const JobUnder& job) {
  const size_t L = top.size();
  std::vector<int64_t> current = top, limits(L, 0);
  std::vector<std::optional<int64_t>> next(L);
  for (size_t i = 0; i < L; ++i) next[i] = best_under(i, current[i] - 1);
  Descent d;
  d.least = start;
  for (;;) {
    size_t pick = L;
    int64_t best = -1;
    for (size_t i = 0; i < L; ++i) {
      if (next[i] && current[i] - *next[i] > best) {
        best = current[i] - *next[i];
        pick = i;
      }
    }
    if (pick == L) return d;
    limits[pick] = current[pick] - 1;
    current[pick] = *next[pick];
    next[pick] = best_under(pick, current[pick] - 1);
    const TrainingMemory m = job(limits);
    if (m.total() <= limit) {
      d.limits = limits;
      d.memory = m;
      return d;
    }
    d.least = std::min(d.least, m.total());
  }
}

}  // namespace

TrainingPlan plan_training(const Network& net, const NetworkPlanOptions& options) {
  const std::optional<int64_t> limit = options.layer.mem_per_rank_bytes;
  NetworkPlanOptions o = options;
  o.layer.mem_per_rank_bytes.reset();
  // Candidates under each layer limit are computed once for the whole search.
  o.cache = make_candidate_cache();
  TrainingPlan t;
  t.plan = plan_network(net, o);
  const auto job = [&](const NetworkPlan& p) {
    ++t.plans_tried;
    return busiest_training_memory(net, p.layer_plans(), options.batch, options.layer.procs,
                                   options.layer.engine);
  };
  t.unconstrained = t.memory = job(t.plan);
  if (!limit || t.memory.total() <= *limit) return t;

  // A layer's rungs are its best plans over the grids it may use; a layer limit is what the
  // network planner gets for that layer (whose programme may pick another of its candidates).
  const size_t L = t.plan.layers.size();
  std::vector<int64_t> top;
  for (size_t i = 0; i < L; ++i) top.push_back(layer_candidates(net, o, i).front().memory_bytes);
  const auto best_under = [&](size_t i, int64_t under) -> std::optional<int64_t> {
    NetworkPlanOptions lo = o;
    lo.layer_limits.assign(L, 0);
    lo.layer_limits[i] = under;
    try {
      return layer_candidates(net, lo, i).front().memory_bytes;
    } catch (const InputError&) {
      return std::nullopt;
    }
  };
  NetworkPlan fitting;
  const Descent d =
      descend(top, *limit, t.memory.total(), best_under, [&](const std::vector<int64_t>& limits) {
        o.layer_limits = limits;
        fitting = plan_network(net, o);
        return job(fitting);
      });
  if (!d.limits) {
    throw InputError(fmt::format(
        "--mem-per-rank {}: training {} at batch {} on {} ranks needs at least {} ({} bytes) per "
        "rank "
        "(activations, parameters, momentum and every layer's buffers; {} unconstrained)",
        format_bytes(*limit), net.name(), options.batch, options.layer.procs, format_bytes(d.least),
        d.least, format_bytes(t.unconstrained.total())));
  }
  t.plan = std::move(fitting);
  t.memory = d.memory;
  t.layer_limits = *d.limits;
  return t;
}

std::vector<LayerPlan> fit_training_on_grids(const Network& net,
                                             const std::vector<LayerPlan>& plans,
                                             const NetworkPlanOptions& options) {
  const int64_t procs = options.layer.procs;
  const auto job = [&](const std::vector<LayerPlan>& p) {
    return busiest_training_memory(net, p, options.batch, procs, options.layer.engine);
  };
  const int64_t start = job(plans).total();
  const std::optional<int64_t> limit = options.layer.mem_per_rank_bytes;
  if (!limit || start <= *limit) return plans;
  // A layer's rungs keep its grid: the grid algorithm, then ever more panels (plan_on_grid),
  // each evaluated once (the look-ahead's plan is the one the next step runs).
  std::map<std::pair<size_t, int64_t>, LayerPlan> evaluated;
  const auto on_grid = [&](size_t i, int64_t under) -> const LayerPlan& {
    auto it = evaluated.find({i, under});
    if (it == evaluated.end()) {
      PlanOptions lo = options.layer;
      lo.mem_per_rank_bytes = under;
      lo.passes = plans[i].pass_list();  // the first layer's has no backward-data
      it = evaluated.emplace(std::pair{i, under}, plan_on_grid(plans[i].shape, plans[i].grid, lo))
               .first;
    }
    return it->second;
  };
  const auto plans_under = [&](const std::vector<int64_t>& limits) {
    std::vector<LayerPlan> out;
    for (size_t i = 0; i < limits.size(); ++i)
      out.push_back(limits[i] > 0 ? on_grid(i, limits[i]) : plans[i]);
    return out;
  };
  std::vector<int64_t> top;
  for (const LayerPlan& p : plans) top.push_back(p.memory_bytes);
  const auto best_under = [&](size_t i, int64_t under) -> std::optional<int64_t> {
    try {
      return on_grid(i, under).memory_bytes;
    } catch (const InputError&) {
      return std::nullopt;
    }
  };
  const Descent d =
      descend(top, *limit, start, best_under,
              [&](const std::vector<int64_t>& limits) { return job(plans_under(limits)); });
  if (!d.limits) {
    throw InputError(fmt::format(
        "--mem-per-rank {}: training {} at batch {} on {} ranks on these grids needs at "
        "least {} ({} bytes) per rank",
        format_bytes(*limit), net.name(), options.batch, procs, format_bytes(d.least), d.least));
  }
  return plans_under(*d.limits);
}

}  // namespace convgrid
