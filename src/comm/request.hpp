// RAII handle of one non-blocking MPI operation. The destructor waits for it, so a request is
// never leaked nor its buffers released while MPI still uses them; wait() reports a failure as
// convgrid::Error, the destructor (which cannot throw) aborts the job instead. The handle also
// keeps the int count arrays MPI reads until completion. Move-only.
#pragma once

#include <mpi.h>

#include "comm/mpi_counts.hpp"

namespace convgrid {

class Request {
 public:
  Request() = default;  // nothing pending
  // Takes `request`, posted by `call` (named in errors), and the int counts and displacements
  // MPI reads until the operation completes.
  Request(MPI_Request request, const char* call, MpiParts parts);

  Request(Request&& other) noexcept;
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  // Blocks until the operation completes; afterwards nothing is pending.
  void wait();
  // True when the operation has completed (then nothing is pending); never blocks.
  bool test();
  bool pending() const { return request_ != MPI_REQUEST_NULL; }
  // Requests of this process posted and not yet completed (tests assert none is left).
  static int64_t outstanding();

 private:
  void finish() noexcept;

  MPI_Request request_ = MPI_REQUEST_NULL;
  const char* call_ = "";
  MpiParts parts_;
};

}  // namespace convgrid
