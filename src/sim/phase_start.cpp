// Every rank starts a timed phase together: a barrier under Open MPI, a common simulated instant
// under SMPI.
#include "sim/phase_start.hpp"

#include <mpi.h>

#include "comm/mpi_error.hpp"

#ifdef CONVGRID_SMPI
#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <smpi/smpi.h>

#include "convgrid/error.hpp"
#endif

namespace convgrid::sim {

double start_together(const Communicator& comm) {
#ifdef CONVGRID_SMPI
  // No rank leaves the all-reduce before the last one has arrived, so every rank learns the same
  // `latest`, and the start after it is the same instant on all of them.
  const double arrived = MPI_Wtime();
  double latest = 0;
  check_mpi(MPI_Allreduce(&arrived, &latest, 1, MPI_DOUBLE, MPI_MAX, comm.raw()), "MPI_Allreduce");
  const double start = latest + kStartMargin;
  // With --compute run SMPI charges the host time a rank spends between MPI calls as compute:
  // that charge is taken here, before the wait, so that none of it falls after the start.
  smpi_bench_end();
  const double now = simgrid::s4u::Engine::get_clock();
  if (now > start) {
    smpi_bench_begin();
    throw Error(fmt::format("a synchronous phase start came {:.3g} s late: the all-reduce before it "
                            "took longer than sim::kStartMargin ({} s)", now - start, kStartMargin));
  }
  simgrid::s4u::this_actor::sleep_until(start);
  smpi_bench_begin();
  return start;
#else
  check_mpi(MPI_Barrier(comm.raw()), "MPI_Barrier");
  return MPI_Wtime();
#endif
}

}  // namespace convgrid::sim
