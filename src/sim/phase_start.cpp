// Every rank starts a timed phase together: a barrier under Open MPI, a common simulated instant
// under SMPI.
#include "sim/phase_start.hpp"

#include <mpi.h>

#include "comm/mpi_error.hpp"

#ifdef CONVGRID_SMPI
#include <cstdio>

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <smpi/smpi.h>
#include <xbt/config.hpp>

#include "convgrid/error.hpp"
#include "sim/rank_state.hpp"
#endif

namespace convgrid::sim {

#ifdef CONVGRID_SMPI
namespace {

// True when SMPI charges the host CPU time a rank spends between MPI calls as simulated compute
// (smpi/simulate-computation, on for --compute run, off for model and comm: scripts/smpirun.sh).
bool host_time_charged() {
  return simgrid::config::get_value<bool>("smpi/simulate-computation");
}

// A rank that finds the common start already past. Where SMPI charges host CPU time, that is this
// machine's noise: on a loaded host the few instructions between two MPI calls have been charged
// 0.4-19 ms (three 64-rank runs sharing two cores), far beyond any margin. Charged to one rank on
// its way into the all-reduce, it delays the all-reduce's end on every rank alike. The rank then
// starts when its all-reduce ended, as after a barrier, and the noise stays outside the phase; the
// communicator's first rank says so, once. Where nothing but the all-reduce can have taken the
// time, the margin is too short for the platform: an error.
void start_late(const Communicator& comm, double late_by) {
  if (!host_time_charged()) {
    throw Error(fmt::format("a synchronous phase start came {:.3g} s late: the all-reduce before it "
                            "took longer than sim::kStartMargin ({} s)", late_by, kStartMargin));
  }
  RankState& state = rank_state();
  if (comm.rank() != 0 || state.late_start_reported) return;
  state.late_start_reported = true;
  std::fprintf(stderr, "convgrid: note: a timed phase started %.3g ms after its common instant: "
               "SMPI charged this machine's CPU time between MPI calls as compute (--compute run); "
               "it started as after a barrier\n", late_by * 1e3);
}

}  // namespace
#endif

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
    start_late(comm, now - start);
    smpi_bench_begin();
    return now;
  }
  simgrid::s4u::this_actor::sleep_until(start);
  smpi_bench_begin();
  return start;
#else
  check_mpi(MPI_Barrier(comm.raw()), "MPI_Barrier");
  return MPI_Wtime();
#endif
}

double now() {
#ifdef CONVGRID_SMPI
  smpi_bench_end();
  const double t = simgrid::s4u::Engine::get_clock();
  smpi_bench_begin();
  return t;
#else
  return MPI_Wtime();
#endif
}

}  // namespace convgrid::sim
