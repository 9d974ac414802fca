// --compute run|model, taken by every command that runs kernels (sim/compute.hpp): run the
// kernels, or, in the SMPI build, skip them and inject their modelled flops.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace convgrid::cli {

void add_compute_flag(CLI::App* sub, std::string& mode);
// Sets this rank's compute mode before anything is allocated; throws InputError for an unknown
// mode and for model outside the SMPI build.
void apply_compute_flag(const std::string& mode);

}  // namespace convgrid::cli
