// Compute mode and injected work: the local-compute point of the SMPI build.
#include "sim/compute.hpp"

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "sim/simulation.hpp"

#ifdef CONVGRID_SMPI
#include <smpi/smpi.h>
#endif

namespace convgrid::sim {

ComputeMode parse_compute_mode(const std::string& text) {
  if (text == "run") return ComputeMode::run;
  if (text == "model" || text == "comm") {
    if (!kSimulated) {
      throw InputError(fmt::format(
          "--compute {} skips the kernels and works on a simulated clock: it needs the SMPI build "
          "(cmake -DCONVGRID_SMPI=ON, run under smpirun)",
          text));
    }
    return text == "model" ? ComputeMode::model : ComputeMode::comm;
  }
  throw InputError(fmt::format("--compute '{}': expected run, model or comm", text));
}

const char* compute_mode_name(ComputeMode mode) {
  switch (mode) {
    case ComputeMode::run:
      return "run";
    case ComputeMode::model:
      return "model";
    case ComputeMode::comm:
      return "comm";
  }
  return "?";
}

void set_compute_mode(ComputeMode mode) { rank_state().compute = mode; }
ComputeMode compute_mode() { return rank_state().compute; }

void inject_flops(double flops) {
#ifdef CONVGRID_SMPI
  if (flops > 0 && compute_mode() == ComputeMode::model) smpi_execute_flops(flops);
#else
  (void)flops;
#endif
}

}  // namespace convgrid::sim
