// The planner's flags as `plan` and `simulate` take them (--passes, --objective, --profile,
// --mem-per-rank), turned into PlanOptions.
#pragma once

#include <string>

#include "plan/layer_planner.hpp"

namespace convgrid::cli {

struct PlanFlags {
  std::string passes = "fwd";  // fwd | train
  std::string objective = "volume";
  std::string profile = "ib100-cpu";
  std::string mem_per_rank;  // empty: no limit
};

// Throws InputError for an unknown profile or a malformed memory size.
PlanOptions plan_options(const PlanFlags& flags, int64_t procs);

}  // namespace convgrid::cli
