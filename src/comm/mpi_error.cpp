// Turning MPI return codes into convgrid::Error (or a job abort, where throwing is impossible).
#include "comm/mpi_error.hpp"

#include <mpi.h>

#include <cstdio>

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "sim/job_abort.hpp"

namespace convgrid {

void check_mpi(int rc, std::string_view call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) {
    throw Error(fmt::format("{} failed: MPI error code {}", call, rc));
  }
  throw Error(fmt::format("{} failed: {}", call, std::string_view(text, length)));
}

void abort_job(std::string_view message) noexcept {
  std::fprintf(stderr, "convgrid: %.*s\n", static_cast<int>(message.size()), message.data());
  sim::abort_all_ranks();
}

}  // namespace convgrid
