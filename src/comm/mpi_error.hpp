// Checking MPI return codes. Every communicator convgrid creates has MPI_ERRORS_RETURN set, so a
// failing call returns its code here instead of aborting inside MPI.
#pragma once

#include <string_view>

namespace convgrid {

// Throws convgrid::Error "<call> failed: <MPI's error string>" unless rc is MPI_SUCCESS.
void check_mpi(int rc, std::string_view call);

// Where throwing is impossible or would leave other ranks waiting: writes "convgrid: <message>" to
// stderr and ends the whole job with exit status 1 (sim::abort_all_ranks: MPI_Abort under Open MPI).
[[noreturn]] void abort_job(std::string_view message) noexcept;

}  // namespace convgrid
