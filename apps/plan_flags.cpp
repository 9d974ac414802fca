// PlanFlags to PlanOptions.
#include "plan_flags.hpp"

#include <fmt/format.h>

#include "convgrid/error.hpp"

namespace convgrid::cli {

PlanOptions plan_options(const PlanFlags& f, int64_t procs) {
  PlanOptions o;
  o.procs = procs;
  if (f.passes == "train") o.passes = {Pass::forward, Pass::backward_data, Pass::backward_weights};
  o.objective = f.objective == "time" ? Objective::time : Objective::volume;
  o.profile = load_profile(f.profile);
  if (!f.mem_per_rank.empty()) o.mem_per_rank_bytes = parse_bytes(f.mem_per_rank);
  return o;
}

GridFamily family_of(const std::string& strategy) {
  if (strategy == "planner") return GridFamily::any;
  if (strategy == "data") return GridFamily::data_parallel;
  if (strategy == "hybrid") return GridFamily::batch_spatial;
  if (strategy == "channel") return GridFamily::channel_filter;
  throw InputError(fmt::format("--plan '{}': expected planner, data, hybrid or channel", strategy));
}

}  // namespace convgrid::cli
