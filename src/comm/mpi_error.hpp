// Checking MPI return codes. Every communicator convgrid creates has MPI_ERRORS_RETURN set, so a
// failing call returns its code here instead of aborting inside MPI.
#pragma once

#include <string_view>

namespace convgrid {

// Throws convgrid::Error "<call> failed: <MPI's error string>" unless rc is MPI_SUCCESS.
void check_mpi(int rc, std::string_view call);

// For destructors, which cannot throw: writes "convgrid: <message>" to stderr and aborts the whole
// job (MPI_Abort), so that no other rank is left waiting.
[[noreturn]] void abort_job(std::string_view message) noexcept;

}  // namespace convgrid
