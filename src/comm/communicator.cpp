// RAII MPI communicator: creation (dup, split, subgroup), error handler, and freeing.
#include "comm/communicator.hpp"

#include <array>
#include <exception>
#include <utility>

#include <fmt/format.h>

#include "comm/mpi_error.hpp"
#include "convgrid/error.hpp"

namespace convgrid {

Communicator::Communicator(MPI_Comm comm) : comm_(comm) {
  try {
    check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  } catch (...) {
    release();
    throw;
  }
}

Communicator Communicator::world() { return duplicate(MPI_COMM_WORLD); }

Communicator Communicator::duplicate(MPI_Comm comm) {
  MPI_Comm dup = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
  return Communicator(dup);
}

Communicator::Communicator(Communicator&& other) noexcept
    : comm_(std::exchange(other.comm_, MPI_COMM_NULL)), rank_(other.rank_), size_(other.size_) {}

Communicator& Communicator::operator=(Communicator&& other) noexcept {
  if (this != &other) {
    release();
    comm_ = std::exchange(other.comm_, MPI_COMM_NULL);
    rank_ = other.rank_;
    size_ = other.size_;
  }
  return *this;
}

Communicator::~Communicator() { release(); }

void Communicator::release() noexcept {
  if (comm_ == MPI_COMM_NULL) return;
  try {
    int finalized = 0;
    check_mpi(MPI_Finalized(&finalized), "MPI_Finalized");
    // After MPI_Finalize no MPI call is allowed; MPI has released the communicator itself.
    if (!finalized) check_mpi(MPI_Comm_free(&comm_), "MPI_Comm_free");
  } catch (const std::exception& e) {
    abort_job(e.what());
  }
  comm_ = MPI_COMM_NULL;
}

Communicator Communicator::split(int color, int key) const {
  if (color < 0) throw Error(fmt::format("Communicator::split: color {} must be >= 0", color));
  MPI_Comm comm = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split(comm_, color, key, &comm), "MPI_Comm_split");
  return Communicator(comm);
}

namespace {

// `ranks` as MPI_Group_range_incl's triplets (first, last, stride), in order: each run of evenly
// spaced ranks one triplet (a lone rank, or the last of a run of one, is its own).
std::vector<std::array<int, 3>> rank_runs(const std::vector<int>& ranks) {
  std::vector<std::array<int, 3>> runs;
  size_t i = 0;
  while (i < ranks.size()) {
    size_t j = i + 1;
    const int stride = j < ranks.size() ? ranks[j] - ranks[i] : 1;
    if (stride > 0) {
      while (j < ranks.size() && ranks[j] - ranks[j - 1] == stride) ++j;
    }
    runs.push_back({ranks[i], ranks[j - 1], stride > 0 ? stride : 1});
    i = j;
  }
  return runs;
}

}  // namespace

Communicator Communicator::subgroup(const std::vector<int>& members, int tag) const {
  MPI_Group all = MPI_GROUP_NULL, part = MPI_GROUP_NULL;
  check_mpi(MPI_Comm_group(comm_, &all), "MPI_Comm_group");
  std::vector<std::array<int, 3>> runs = rank_runs(members);
  const int incl = MPI_Group_range_incl(all, static_cast<int>(runs.size()),
                                        reinterpret_cast<int(*)[3]>(runs.data()), &part);
  MPI_Group_free(&all);
  check_mpi(incl, "MPI_Group_range_incl");
  MPI_Comm comm = MPI_COMM_NULL;
  const int created = MPI_Comm_create_group(comm_, part, tag, &comm);
  MPI_Group_free(&part);
  check_mpi(created, "MPI_Comm_create_group");
  if (comm == MPI_COMM_NULL) throw Error(fmt::format("Communicator::subgroup: rank {} is not a member", rank_));
  return Communicator(comm);
}

Communicator Communicator::dup() const { return duplicate(comm_); }

}  // namespace convgrid
