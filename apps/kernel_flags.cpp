// --compute and --threads: the flags and what they set.
#include "kernel_flags.hpp"

#include "sim/compute.hpp"

namespace convgrid::cli {

void add_compute_flag(CLI::App* sub, std::string& mode) {
  sub->add_option("--compute", mode,
                  "run: the real kernels; model (SMPI build, under smpirun): kernels skipped, their modelled "
                  "flops injected into the simulated clock, large buffers folded (docs/scale.md); comm: as model with no compute "
                  "time, the communication alone");
}

void apply_compute_flag(const std::string& mode) { sim::set_compute_mode(sim::parse_compute_mode(mode)); }

void add_threads_flag(CLI::App* sub, int& threads) {
  sub->add_option("--threads", threads,
                  "kernel threads per rank (0: the cores of the rank's affinity mask, shared with the ranks of "
                  "its node that overlap it)");
}

}  // namespace convgrid::cli
