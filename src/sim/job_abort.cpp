// Ending the job from some of its ranks: MPI_Abort, or under SMPI the simulator process itself.
#include "sim/job_abort.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>

namespace convgrid::sim {

void abort_all_ranks() noexcept {
  std::fflush(nullptr);
#ifdef CONVGRID_SMPI
  // Every rank is a context of this one process: ending it ends them all. std::_Exit, not exit:
  // SimGrid's exit handler stops with "Process exited without calling MPI_Finalize" (SIGABRT)
  // while ranks are still alive.
  std::_Exit(1);
#else
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] true if it ever does
#endif
}

}  // namespace convgrid::sim
