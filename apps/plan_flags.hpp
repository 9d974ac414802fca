// The planner's flags as `plan`, `simulate` and `step` take them (--passes, --objective, --profile,
// --mem-per-rank, --plan), turned into PlanOptions.
#pragma once

#include <string>

#include "plan/layer_planner.hpp"
#include "plan/network_planner.hpp"

namespace convgrid::cli {

struct PlanFlags {
  std::string passes = "fwd";  // fwd | train
  std::string objective = "volume";
  std::string profile = "ib100-cpu";
  std::string mem_per_rank;  // empty: no limit
};

// Throws InputError for an unknown profile or a malformed memory size.
PlanOptions plan_options(const PlanFlags& flags, int64_t procs);

// The grids a network's plan may use, as `step` and `plan` take them (--plan): "planner" (every
// grid), "data" (data parallelism), "hybrid" (batch x spatial) or "channel" (channel and filter
// parallelism, as train --family channel_filter). InputError naming anything else.
GridFamily family_of(const std::string& strategy);

}  // namespace convgrid::cli
