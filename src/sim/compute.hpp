// Local compute under simulation (`--compute run|model|comm`).
//
// run:   the kernels run; under SMPI their CPU time is injected into the simulated clock, scaled
//        from this machine's speed (smpi/host-speed) to the platform's.
// model: the kernels are skipped and their modelled work (the cost model's flops of the local
//        block) is injected with smpi_execute_flops, so the simulated host, whose speed is the
//        profile's flop rate, takes exactly the profile's compute time. Results are not computed
//        (buffers hold garbage), words and messages are still counted exactly. SMPI build only.
// comm:  as model, with no compute time at all: the communication alone, against which a
//        streamed pass's overlap is measured (bench/overlap.sh). SMPI build only.
#pragma once

#include <string>

#include "sim/rank_state.hpp"

namespace convgrid::sim {

// "run", "model" or "comm"; throws InputError otherwise, and for "model" and "comm" outside the
// SMPI build.
ComputeMode parse_compute_mode(const std::string& text);
const char* compute_mode_name(ComputeMode mode);

// Set once, before the first buffer is allocated (allocation folds large buffers in model mode).
void set_compute_mode(ComputeMode mode);
ComputeMode compute_mode();
inline bool kernels_skipped() { return compute_mode() != ComputeMode::run; }

// Advances this rank's simulated clock by the time its host takes for `flops` (SMPI, model
// mode); nothing under Open MPI or in comm mode.
void inject_flops(double flops);

}  // namespace convgrid::sim
