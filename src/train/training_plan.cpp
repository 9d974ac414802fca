// The memory search of train/training_plan.hpp: each layer's ladder of plans, then the greedy
// descent over them.
#include "train/training_plan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "convgrid/error.hpp"

namespace convgrid {
namespace {

std::vector<LayerPlan> layer_plans(const NetworkPlan& p) {
  std::vector<LayerPlan> out;
  for (const NetworkLayerPlan& l : p.layers) out.push_back(l.plan);
  return out;
}

// The memory of the layer's best plan with no limit, then under one byte less than the last,
// and so on while some grid fits: the limits at which the layer's best plan changes.
std::vector<int64_t> memory_ladder(const ConvShape& shape, const NetworkPlanOptions& no) {
  PlanOptions o = no.layer;
  o.mem_per_rank_bytes.reset();
  bool fallback = false;
  const GridFilter allowed = family_filter(no.family, shape, o.procs, fallback);
  std::vector<int64_t> steps;
  for (;;) {
    int64_t m = 0;
    try {
      m = best_layer_plans(shape, o, 1, allowed).front().memory_bytes;
    } catch (const InputError&) {
      if (steps.empty()) throw;
      return steps;
    }
    steps.push_back(m);
    o.mem_per_rank_bytes = m - 1;
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

  std::vector<std::vector<int64_t>> ladders;
  for (const NetworkLayerPlan& l : t.plan.layers) ladders.push_back(memory_ladder(l.plan.shape, o));
  std::vector<size_t> rung(ladders.size(), 0);
  o.layer_limits.assign(ladders.size(), 0);
  int64_t least = t.memory.total();
  for (;;) {
    // The layer whose next rung saves the most (the first of equals): large savings come before
    // many panels that save little.
    size_t pick = ladders.size();
    int64_t best = -1;
    for (size_t i = 0; i < ladders.size(); ++i) {
      if (rung[i] + 1 >= ladders[i].size()) continue;
      const int64_t saving = ladders[i][rung[i]] - ladders[i][rung[i] + 1];
      if (saving > best) {
        best = saving;
        pick = i;
      }
    }
    if (pick == ladders.size()) break;  // every layer at its leanest
    o.layer_limits[pick] = ladders[pick][++rung[pick]];
    NetworkPlan p = plan_network(net, o);
    const TrainingMemory m = job(p);
    if (m.total() <= *limit) {
      t.plan = std::move(p);
      t.memory = m;
      t.layer_limits = o.layer_limits;
      return t;
    }
    least = std::min(least, m.total());
  }
  throw InputError(
      fmt::format("--mem-per-rank {}: training {} at batch {} on {} ranks needs at least {} ({} "
                  "bytes) per rank "
                  "(activations, parameters, momentum and every layer's buffers; {} unconstrained)",
                  format_bytes(*limit), net.name(), options.batch, options.layer.procs,
                  format_bytes(least), least, format_bytes(t.unconstrained.total())));
}

}  // namespace convgrid
