// The memory search of train/training_plan.hpp: each layer's ladder of plans, then the greedy
// descent over them (on the planner's grids, or on fixed ones).
#include "train/training_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>

#include "convgrid/error.hpp"

namespace convgrid {
namespace {

std::vector<LayerPlan> layer_plans(const NetworkPlan& p) {
  std::vector<LayerPlan> out;
  for (const NetworkLayerPlan& l : p.layers) out.push_back(l.plan);
  return out;
}

// The plan `under` gives with no limit, then under one byte less than the last one's memory,
// and so on until it throws InputError (no plan): the rungs of a layer, most memory first.
std::vector<LayerPlan> ladder(const std::function<LayerPlan(std::optional<int64_t>)>& under) {
  std::vector<LayerPlan> rungs{under(std::nullopt)};
  for (;;) {
    try {
      rungs.push_back(under(rungs.back().memory_bytes - 1));
    } catch (const InputError&) {
      return rungs;
    }
  }
}

// The greedy descent: from rung 0 of every ladder, moves down one rung the layer whose next rung
// saves the most (the first of equals) and asks `job` for the busiest rank's memory, until it
// fits `limit`. Large savings come before many panels that save little. Returns the rungs that
// fit and their memory, or none; `least` is the least job seen (the start's included).
struct Descent {
  std::optional<std::vector<size_t>> rungs;
  TrainingMemory memory;
  int64_t least = 0;
};

Descent descend(const std::vector<std::vector<LayerPlan>>& ladders, int64_t limit, int64_t start,
                const std::function<TrainingMemory(const std::vector<size_t>&)>& job) {
  Descent d;
  d.least = start;
  std::vector<size_t> rung(ladders.size(), 0);
  for (;;) {
    size_t pick = ladders.size();
    int64_t best = -1;
    for (size_t i = 0; i < ladders.size(); ++i) {
      if (rung[i] + 1 >= ladders[i].size()) continue;
      const int64_t saving =
          ladders[i][rung[i]].memory_bytes - ladders[i][rung[i] + 1].memory_bytes;
      if (saving > best) {
        best = saving;
        pick = i;
      }
    }
    if (pick == ladders.size()) return d;  // every layer at its leanest
    ++rung[pick];
    const TrainingMemory m = job(rung);
    if (m.total() <= limit) {
      d.rungs = rung;
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
  TrainingPlan t;
  t.plan = plan_network(net, o);
  const auto job = [&](const NetworkPlan& p) {
    ++t.plans_tried;
    return busiest_training_memory(net, layer_plans(p), options.batch, options.layer.procs,
                                   options.layer.engine);
  };
  t.unconstrained = t.memory = job(t.plan);
  if (!limit || t.memory.total() <= *limit) return t;

  // Each layer's ladder is its best plans over the grids it may use; a rung's memory is the limit
  // the network planner gets for that layer (whose programme may then pick another grid under it).
  std::vector<std::vector<LayerPlan>> ladders;
  for (const NetworkLayerPlan& l : t.plan.layers) {
    bool fallback = false;
    const GridFilter allowed = family_filter(o.family, l.plan.shape, o.layer.procs, fallback);
    ladders.push_back(ladder([&](std::optional<int64_t> under) {
      PlanOptions lo = o.layer;
      lo.mem_per_rank_bytes = under;
      return best_layer_plans(l.plan.shape, lo, 1, allowed).front();
    }));
  }
  NetworkPlan fitting;
  const auto limits_of = [&](const std::vector<size_t>& rungs) {
    std::vector<int64_t> limits(rungs.size(), 0);
    for (size_t i = 0; i < rungs.size(); ++i)
      limits[i] = rungs[i] > 0 ? ladders[i][rungs[i]].memory_bytes : 0;
    return limits;
  };
  const Descent d =
      descend(ladders, *limit, t.memory.total(), [&](const std::vector<size_t>& rungs) {
        o.layer_limits = limits_of(rungs);
        fitting = plan_network(net, o);
        return job(fitting);
      });
  if (!d.rungs) {
    throw InputError(fmt::format(
        "--mem-per-rank {}: training {} at batch {} on {} ranks needs at least {} ({} bytes) per "
        "rank "
        "(activations, parameters, momentum and every layer's buffers; {} unconstrained)",
        format_bytes(*limit), net.name(), options.batch, options.layer.procs, format_bytes(d.least),
        d.least, format_bytes(t.unconstrained.total())));
  }
  t.plan = std::move(fitting);
  t.memory = d.memory;
  t.layer_limits = limits_of(*d.rungs);
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
  // Each layer's ladder keeps its grid: the grid algorithm, then ever more panels.
  std::vector<std::vector<LayerPlan>> ladders;
  for (const LayerPlan& p : plans) {
    ladders.push_back(ladder([&](std::optional<int64_t> under) {
      PlanOptions lo = options.layer;
      lo.mem_per_rank_bytes = under;
      return plan_on_grid(p.shape, p.grid, lo);
    }));
  }
  const auto plans_at = [&](const std::vector<size_t>& rungs) {
    std::vector<LayerPlan> out;
    for (size_t i = 0; i < rungs.size(); ++i) out.push_back(ladders[i][rungs[i]]);
    return out;
  };
  const Descent d = descend(ladders, *limit, start,
                            [&](const std::vector<size_t>& rungs) { return job(plans_at(rungs)); });
  if (!d.rungs) {
    throw InputError(fmt::format(
        "--mem-per-rank {}: training {} at batch {} on {} ranks on these grids needs at "
        "least {} ({} bytes) per rank",
        format_bytes(*limit), net.name(), options.batch, procs, format_bytes(d.least), d.least));
  }
  return plans_at(*d.rungs);
}

}  // namespace convgrid
