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
  if (text == "model") {
    if (!kSimulated) {
      throw InputError(
          "--compute model skips the kernels and injects their modelled time into a simulated clock: it "
          "needs the SMPI build (cmake -DCONVGRID_SMPI=ON, run under smpirun)");
    }
    return ComputeMode::model;
  }
  throw InputError(fmt::format("--compute '{}': expected run or model", text));
}

const char* compute_mode_name(ComputeMode mode) { return mode == ComputeMode::run ? "run" : "model"; }

void set_compute_mode(ComputeMode mode) { rank_state().compute = mode; }
ComputeMode compute_mode() { return rank_state().compute; }

void inject_flops(double flops) {
#ifdef CONVGRID_SMPI
  if (flops > 0) smpi_execute_flops(flops);
#else
  (void)flops;
#endif
}

}  // namespace convgrid::sim
