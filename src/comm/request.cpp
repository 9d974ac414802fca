// RAII handle of one non-blocking MPI operation.
#include "comm/request.hpp"

#include <exception>
#include <utility>

#include <fmt/format.h>

#include "comm/mpi_error.hpp"
#include "sim/rank_state.hpp"

namespace convgrid {

int64_t Request::outstanding() { return sim::rank_state().outstanding_requests; }

Request::Request(MPI_Request request, const char* call, MpiParts parts)
    : request_(request), call_(call), parts_(std::move(parts)) {
  if (pending()) ++sim::rank_state().outstanding_requests;
}

Request::Request(Request&& other) noexcept
    : request_(std::exchange(other.request_, MPI_REQUEST_NULL)),
      call_(other.call_),
      parts_(std::move(other.parts_)) {}

Request& Request::operator=(Request&& other) noexcept {
  if (this != &other) {
    finish();
    request_ = std::exchange(other.request_, MPI_REQUEST_NULL);
    call_ = other.call_;
    parts_ = std::move(other.parts_);
  }
  return *this;
}

Request::~Request() { finish(); }

void Request::finish() noexcept {
  try {
    wait();
  } catch (const std::exception& e) {
    abort_job(e.what());
  }
}

void Request::wait() {
  if (!pending()) return;
  const int rc = MPI_Wait(&request_, MPI_STATUS_IGNORE);
  --sim::rank_state().outstanding_requests;  // MPI_Wait releases the request whatever it returns
  if (rc != MPI_SUCCESS) check_mpi(rc, fmt::format("MPI_Wait for {}", call_));
  parts_ = {};
}

bool Request::test() {
  if (!pending()) return true;
  int done = 0;
  const int rc = MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) check_mpi(rc, fmt::format("MPI_Test for {}", call_));
  if (done) {
    --sim::rank_state().outstanding_requests;
    parts_ = {};
  }
  return done != 0;
}

}  // namespace convgrid
