// The start of a timed phase (a pass, a redistribution): the timing point of the SMPI build.
//
// Open MPI build: a barrier, then the clock. Ranks leave a barrier at different times (its last
// messages reach them rounds apart), so a phase timed from it on each rank includes that skew:
// a rank that left early waits inside the phase for a peer that left late.
// SMPI build: every rank starts the phase at the same simulated instant, as the cost model
// assumes. An all-reduce tells every rank the latest time any rank arrived; each then sleeps
// (simulated time) until kStartMargin after it. On 64 simulated GPUs the skew of a barrier had
// added 2-9 us to passes of 13-90 us (docs/scale.md, "Starting a phase together").
#pragma once

#include "comm/communicator.hpp"

namespace convgrid::sim {

// Longer than an all-reduce of one double takes on the platforms (tens of microseconds at 4096
// ranks); the wait is simulated time outside every timed phase.
inline constexpr double kStartMargin = 1e-3;

// Waits until every rank of `comm` may start the phase together and returns the start time
// (MPI_Wtime). Collective over `comm`. Under SMPI with --compute run, where SMPI charges this
// machine's CPU time as compute, host noise can push a rank past the common instant: it then
// starts at once, when its all-reduce ended, and the time returned is that (phase_start.cpp).
double start_together(const Communicator& comm);

// The clock, for timing parts of a phase without moving it: MPI_Wtime under Open MPI; under SMPI
// the simulated clock, after the host time the rank spent since its last MPI call is charged (as
// MPI_Wtime would), but with no sleep of its own (MPI_Wtime sleeps smpi/wtime seconds).
double now();

}  // namespace convgrid::sim
