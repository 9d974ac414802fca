// RAII MPI communicator: owns one MPI_Comm, frees it in the destructor, move-only.
//
// Every Communicator owns its handle; the job's world is reached through Communicator::world(),
// a duplicate of MPI_COMM_WORLD, so MPI_COMM_WORLD itself is never freed nor given a different
// error handler. Each communicator made here has MPI_ERRORS_RETURN set, and every MPI call on it
// is checked: a failure throws convgrid::Error naming the call and MPI's error string.
// A moved-from Communicator holds MPI_COMM_NULL and may only be destroyed or assigned to.
#pragma once

#include <mpi.h>

#include <vector>

namespace convgrid {

class Communicator {
 public:
  // A duplicate of MPI_COMM_WORLD (collective over the whole job). MPI must be initialised.
  static Communicator world();
  // A duplicate of a communicator the caller owns and keeps (collective over it): how a user's
  // MPI_Comm enters the library (convgrid/distributed_conv.hpp).
  static Communicator duplicate(MPI_Comm comm);

  Communicator(Communicator&& other) noexcept;
  Communicator& operator=(Communicator&& other) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator();

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm raw() const { return comm_; }

  // MPI_Comm_split (collective): the ranks with the same color (>= 0) form one new communicator,
  // ordered by key, ties broken by the rank here.
  Communicator split(int color, int key) const;
  // MPI_Comm_create_group (collective over the members only): the ranks `members` of this
  // communicator, in that order, form a new one; every member passes the same list and `tag`
  // (distinct tags for creations that may run at once). Where each rank knows its group, as a
  // grid's fibres do, this asks nothing of the other ranks, where MPI_Comm_split gathers every
  // rank's color: SimGrid 3.32 does that with a linear gather to rank 0 whose completion costs
  // grow with the square of the ranks, minutes per split at 4096 (docs/scale.md). The group is
  // given as runs of evenly spaced ranks (MPI_Group_range_incl): SimGrid 3.32's MPI_Group_incl
  // checks a list of n ranks for repeats by comparing every pair, which for the 4096 members of a
  // fibre of all ranks, on each of them, was 30-40% of the host time of a 4096-rank step.
  Communicator subgroup(const std::vector<int>& members, int tag) const;
  // MPI_Comm_dup (collective): same group, separate message space.
  Communicator dup() const;

 private:
  // Takes ownership of `comm` and sets MPI_ERRORS_RETURN on it.
  explicit Communicator(MPI_Comm comm);
  void release() noexcept;

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 0;
};

}  // namespace convgrid
