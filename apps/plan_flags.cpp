// PlanFlags to PlanOptions.
#include "plan_flags.hpp"

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

}  // namespace convgrid::cli
