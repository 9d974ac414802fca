// A plan made on one rank, run on all: rank 0 plans (planning is deterministic, but under SMPI the
// simulated ranks share one core, so planning on every rank would cost P times), and every other
// rank receives what it needs to run each layer: its grid, panels and algorithm.
#pragma once

#include <vector>

#include "comm/communicator.hpp"
#include "plan/layer_planner.hpp"

namespace convgrid {

// Collective over `world`. On rank 0 `plans` (one per compute layer, in order) is left as it is;
// on every other rank it becomes plans holding `shapes` and rank 0's grid, panels and algorithm of
// each layer, without the figures (passes, memory), which are rank 0's to report.
void broadcast_plan_choices(const Communicator& world, const std::vector<ConvShape>& shapes,
                            std::vector<LayerPlan>& plans);

}  // namespace convgrid
