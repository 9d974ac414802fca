// Ending the whole job at once when only some ranks failed, so that no rank is left waiting in a
// collective: MPI_Abort under Open MPI. Under SMPI (SimGrid 3.32) MPI_Abort kills every rank but
// drops its error code, and the simulation then ends with exit status 0, as if it had succeeded;
// the SMPI build ends the simulator process itself, with status 1.
#pragma once

namespace convgrid::sim {

// Flushes what every rank has written and ends the job with exit status 1. Never returns.
[[noreturn]] void abort_all_ranks() noexcept;

}  // namespace convgrid::sim
