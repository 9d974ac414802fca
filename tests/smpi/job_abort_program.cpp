// One rank ends the job (convgrid::abort_job) while every other rank waits in a barrier it can
// never leave. Run by job_abort.sh under smpirun: the simulation must end at once with exit
// status 1 and the rank's line, not hang and not end with status 0 (SimGrid 3.32's MPI_Abort
// drops its error code: sim/job_abort.hpp).
#include <mpi.h>

#include <string>

#include "comm/mpi_error.hpp"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == size - 1) convgrid::abort_job("rank " + std::to_string(rank) + " ends the job");
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
