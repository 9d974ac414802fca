// Plans for training under a memory limit on the whole job (train/training_memory.hpp), not on
// each layer alone: every layer keeps its buffers between steps and the network's activations,
// parameters and momentum stay alive too, so the job needs far more than its largest layer.
//
// The search gives each layer a memory limit of its own. First, each layer's ladder: the memory
// of its best plan with no limit, then under one byte less, and so on until no grid fits (the
// plan streams in more panels or moves to a leaner grid at each rung). Then, from the
// unconstrained plans, it repeatedly moves the layer whose next rung saves the most bytes down
// one rung and plans the network under those limits (plan/network_planner.hpp, whose dynamic
// programme still chooses among each layer's grids under its limit), until the busiest rank's
// job fits. Large savings come first, so a layer streams in many panels only when the limit
// needs it. The path does not depend on the limit: when no rung fits, the error names the least
// the job needed on the way, and a run with that limit stops at that step.
#pragma once

#include <cstdint>
#include <optional>

#include "nn/network.hpp"
#include "plan/network_planner.hpp"
#include "train/training_memory.hpp"

namespace convgrid {

struct TrainingPlan {
  NetworkPlan plan;
  TrainingMemory memory;              // the busiest rank's, for these plans
  TrainingMemory unconstrained;       // the busiest rank's, for the unconstrained plans
  std::vector<int64_t> layer_limits;  // each compute layer's limit for these plans (0: none)
  int64_t plans_tried = 0;            // plan sets evaluated
};

// options.layer.mem_per_rank_bytes, when set, bounds the busiest rank's whole job. Throws
// InputError as plan_network does, and when no plan set fits the limit (naming the limit and the
// least found).
TrainingPlan plan_training(const Network& net, const NetworkPlanOptions& options);

// The same search when every layer's grid is given (`plans`, one per compute layer): a layer's
// ladder keeps its grid and streams in ever more panels (plan_on_grid). Returns `plans` when
// they fit or there is no limit; InputError with the least the job needs on these grids.
std::vector<LayerPlan> fit_training_on_grids(const Network& net,
                                             const std::vector<LayerPlan>& plans,
                                             const NetworkPlanOptions& options);

}  // namespace convgrid
