// The flags of every command that runs kernels: --compute run|model|comm (sim/compute.hpp: run
// the kernels, or, in the SMPI build, skip them and inject their modelled flops) and --threads
// (kernel threads per rank; by default the rank's share of its cores, comm/kernel_threads.hpp).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "comm/kernel_threads.hpp"

namespace convgrid::cli {

void add_compute_flag(CLI::App* sub, std::string& mode);
// Sets this rank's compute mode before anything is allocated; throws InputError for an unknown
// mode and for model outside the SMPI build.
void apply_compute_flag(const std::string& mode);

// --threads: the count for use_kernel_threads (comm/kernel_threads.hpp).
void add_threads_flag(CLI::App* sub, int& threads);

}  // namespace convgrid::cli
