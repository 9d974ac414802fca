// collective_check: an all-reduce (MIN) of the failing rank, then a broadcast of its message.
#include "comm/collective_check.hpp"

#include <algorithm>
#include <climits>

#include "comm/mpi_error.hpp"
#include "convgrid/error.hpp"

namespace convgrid {

void collective_check(const Communicator& comm, bool ok, const std::string& message) {
  const int mine = ok ? comm.size() : comm.rank();
  int first = 0;
  check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm.raw()), "MPI_Allreduce");
  if (first == comm.size()) return;

  // Only the first failing rank's length matters; a message longer than MPI's int count (never
  // in practice) is cut rather than thrown on one rank only, which would leave the others waiting.
  int length = static_cast<int>(std::min<std::size_t>(message.size(), INT_MAX));
  check_mpi(MPI_Bcast(&length, 1, MPI_INT, first, comm.raw()), "MPI_Bcast");
  std::string text = comm.rank() == first ? message.substr(0, length) : std::string(length, '\0');
  check_mpi(MPI_Bcast(text.data(), length, MPI_CHAR, first, comm.raw()), "MPI_Bcast");
  throw InputError(text);
}

}  // namespace convgrid
