// Moving an activation (or its gradient) between two ways of spreading it over the ranks: one
// all-to-all over all P ranks with exact counts (SPEC section 8).
//
// `held(r)` is the Slice rank r stores (densely, in the slice's flattening order) of the tensor
// `held_tensor`; `wanted(r)` the Slice rank r needs of `wanted_tensor`, which is the same
// activation or its flattened view (N x C*H*W x 1 x 1; see model/redistribution.hpp). Wanted
// slices may overlap each other (the halo of a pooling window): an element then goes to every
// rank that wants it. forward() delivers every wanted element from its holder; reverse_add()
// sends gradients back the other way and adds them into the holders' storage (overlaps sum).
//
// Every rank computes the same list of pieces (its held boxes cut by each peer's wanted boxes)
// once, as runs of consecutive elements in both storages, so an exchange is memcpy of runs and
// one MPI_Alltoallv; elements a rank holds and wants itself are copied locally and not counted.
// When no rank receives anything the all-to-all is not run (every rank knows it).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/traffic.hpp"
#include "convgrid/memory.hpp"
#include "layout/box.hpp"

namespace convgrid {

using SliceOf = std::function<Slice(int64_t rank)>;

class BoxExchange {
 public:
  // Collective-free; `comm` is kept by reference and must outlive the exchange. Throws
  // InputError when the two tensors are not views of one activation.
  BoxExchange(const Communicator& comm, const Box4& held_tensor, const SliceOf& held,
              const Box4& wanted_tensor, const SliceOf& wanted);

  int64_t held_size() const { return held_size_; }
  int64_t wanted_size() const { return wanted_size_; }
  // Words this rank receives in forward() (and sends in reverse_add()).
  int64_t recv_words() const { return recv_total_; }
  int64_t send_words() const { return send_total_; }
  // True when this rank wants exactly what it holds and nothing moves anywhere: the caller may
  // use its held storage as the wanted one, and forward() is a copy.
  bool identity() const { return identity_; }

  void forward(const float* held, float* wanted, TrafficCounter& traffic);
  // wanted_grad -> held_grad, added (held_grad is not cleared here).
  void reverse_add(const float* wanted_grad, float* held_grad, TrafficCounter& traffic);

 private:
  struct Run {
    int64_t held, wanted, length;  // offsets in the two storages
  };
  // Runs per peer (in peer order; the pieces of one peer in the order both sides compute).
  std::vector<std::vector<Run>> send_runs_, recv_runs_;
  std::vector<Run> self_runs_;
  std::vector<int64_t> send_counts_, send_displs_, recv_counts_, recv_displs_;
  int64_t held_size_ = 0, wanted_size_ = 0, send_total_ = 0, recv_total_ = 0;
  bool anything_moves_ = false, identity_ = false;
  const Communicator& comm_;
  Buffer send_, recv_;
};

}  // namespace convgrid
