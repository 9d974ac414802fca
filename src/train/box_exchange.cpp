// One all-to-all between two spreads of an activation (see box_exchange.hpp). The pieces of a
// (holder, wanter) pair are the intersections of the holder's boxes with the wanter's, both in a
// common view (the flattened one when the two tensors differ); each piece is walked in row-major
// order, and consecutive elements that are consecutive in both storages form one run.
#include "train/box_exchange.hpp"

#include <algorithm>
#include <cstring>

#include "comm/collectives.hpp"
#include "kernel/vector_loops.hpp"
#include "sim/compute.hpp"
#include "convgrid/error.hpp"
#include "model/redistribution.hpp"

namespace convgrid {
namespace {

// A slice of one view of the activation, and how to find an element of the common view in it.
struct ViewedSlice {
  Slice slice;
  Box4 tensor;
  bool unflatten = false;  // the common view is flat and this slice is of the C x H x W tensor

  std::vector<Box4> boxes() const {
    const std::vector<Box4> out = slice_boxes(slice);
    return unflatten ? flattened(out, tensor) : out;
  }
  // Storage offset of element (a, b, c, d) of the common view.
  int64_t offset(int64_t a, int64_t b, int64_t c, int64_t d) const {
    if (!unflatten) return slice.box.offset(a, b, c, d) - slice.flat.begin;
    const int64_t H = tensor.extent(2), W = tensor.extent(3);
    return slice.box.offset(a, b / (H * W), b / W % H, b % W) - slice.flat.begin;
  }
};

// Appends the runs of the elements `from` holds and `to` wants, in the order both sides use.
template <class Add>
void for_each_piece_run(const ViewedSlice& from, const ViewedSlice& to, Add&& add) {
  if (from.slice.empty() || to.slice.empty()) return;
  const std::vector<Box4> a = from.boxes(), b = to.boxes();
  for (const Box4& x : a) {
    for (const Box4& y : b) {
      const Box4 p = x.intersect(y);
      if (p.empty()) continue;
      for (int64_t i = p.r[0].begin; i < p.r[0].end; ++i) {
        for (int64_t j = p.r[1].begin; j < p.r[1].end; ++j) {
          for (int64_t k = p.r[2].begin; k < p.r[2].end; ++k) {
            for (int64_t l = p.r[3].begin; l < p.r[3].end; ++l) {
              add(from.offset(i, j, k, l), to.offset(i, j, k, l));
            }
          }
        }
      }
    }
  }
}

// Appends the pair (held, wanted) to runs, extending the last run when both offsets follow it.
struct RunBuilder {
  template <class Run>
  static void add(std::vector<Run>& runs, int64_t held, int64_t wanted) {
    if (!runs.empty()) {
      Run& last = runs.back();
      if (last.held + last.length == held && last.wanted + last.length == wanted) {
        ++last.length;
        return;
      }
    }
    runs.push_back({held, wanted, 1});
  }
};

template <class Run>
int64_t total(const std::vector<Run>& runs) {
  int64_t n = 0;
  for (const Run& r : runs) n += r.length;
  return n;
}

}  // namespace

BoxExchange::BoxExchange(const Communicator& comm, const Box4& held_tensor, const SliceOf& held,
                         const Box4& wanted_tensor, const SliceOf& wanted)
    : comm_(comm) {
  const bool same = same_extents(held_tensor, wanted_tensor);
  if (!same && !is_flattened_view(held_tensor, wanted_tensor) &&
      !is_flattened_view(wanted_tensor, held_tensor)) {
    throw InputError("an exchange between two tensors that are not views of one activation");
  }
  const bool held_unflatten = !same && is_flattened_view(wanted_tensor, held_tensor);
  const bool wanted_unflatten = !same && is_flattened_view(held_tensor, wanted_tensor);
  const int P = comm.size(), me = comm.rank();
  const auto held_of = [&](int64_t r) { return ViewedSlice{held(r), held_tensor, held_unflatten}; };
  const auto wanted_of = [&](int64_t r) {
    return ViewedSlice{wanted(r), wanted_tensor, wanted_unflatten};
  };
  const ViewedSlice my_held = held_of(me), my_wanted = wanted_of(me);
  held_size_ = my_held.slice.size();
  wanted_size_ = my_wanted.slice.size();
  send_runs_.resize(P);
  recv_runs_.resize(P);
  send_counts_.assign(P, 0);
  recv_counts_.assign(P, 0);
  int64_t moved_anywhere = 0;
  for (int r = 0; r < P; ++r) {
    const ViewedSlice their_wanted = wanted_of(r), their_held = held_of(r);
    if (r == me) {
      for_each_piece_run(my_held, my_wanted,
                         [&](int64_t h, int64_t w) { RunBuilder::add(self_runs_, h, w); });
      continue;
    }
    for_each_piece_run(my_held, their_wanted,
                       [&](int64_t h, int64_t w) { RunBuilder::add(send_runs_[r], h, w); });
    for_each_piece_run(their_held, my_wanted,
                       [&](int64_t h, int64_t w) { RunBuilder::add(recv_runs_[r], h, w); });
    send_counts_[r] = total(send_runs_[r]);
    recv_counts_[r] = total(recv_runs_[r]);
    moved_anywhere += send_counts_[r] + recv_counts_[r];
  }
  // Whether anyone receives anything: every rank computes it from the spreads alone. Held
  // slices partition the tensor (an at-rest placement), so rank r receives what it wants less
  // what it holds of it: one overlap per rank (as train/training_memory models it), not every
  // pair of ranks (P^2 intersections, which a simulated cluster of 1024 ranks cannot afford).
  for (int r = 0; r < P && moved_anywhere == 0; ++r) {
    const Slice w = wanted(r);
    if (w.size() > slice_overlap(held(r), held_tensor, w, wanted_tensor)) moved_anywhere = 1;
  }
  anything_moves_ = moved_anywhere > 0 && P > 1;
  send_displs_.assign(P, 0);
  recv_displs_.assign(P, 0);
  for (int r = 1; r < P; ++r) {
    send_displs_[r] = send_displs_[r - 1] + send_counts_[r - 1];
    recv_displs_[r] = recv_displs_[r - 1] + recv_counts_[r - 1];
  }
  send_total_ = send_displs_[P - 1] + send_counts_[P - 1];
  recv_total_ = recv_displs_[P - 1] + recv_counts_[P - 1];
  identity_ = same && recv_total_ == 0 && my_held.slice.box == my_wanted.slice.box &&
              my_held.slice.flat == my_wanted.slice.flat;
  if (anything_moves_) {
    send_ = Buffer(std::max<int64_t>(send_total_, 1));
    recv_ = Buffer(std::max<int64_t>(recv_total_, 1));
  }
}

namespace {

// Copies the runs of each peer, read from `from` at offset Run::*at, into the peer's part of
// `buffer` (one after the other, in the order both sides agreed).
template <class Run>
void pack(const std::vector<std::vector<Run>>& runs, const std::vector<int64_t>& displs,
          int64_t Run::*at, const float* from, float* buffer) {
  for (size_t r = 0; r < runs.size(); ++r) {
    float* out = buffer + displs[r];
    for (const Run& run : runs[r]) {
      std::memcpy(out, from + run.*at, run.length * sizeof(float));
      out += run.length;
    }
  }
}

// The other way: each peer's part of `buffer` into `to` at Run::*at, copied or added.
template <class Run>
void unpack(const std::vector<std::vector<Run>>& runs, const std::vector<int64_t>& displs,
            int64_t Run::*at, const float* buffer, float* to, bool add) {
  for (size_t r = 0; r < runs.size(); ++r) {
    const float* in = buffer + displs[r];
    for (const Run& run : runs[r]) {
      float* dst = to + run.*at;
      if (add) {
        add_into(dst, in, run.length);
      } else {
        std::memcpy(dst, in, run.length * sizeof(float));
      }
      in += run.length;
    }
  }
}

}  // namespace

// With --compute model (sim/compute.hpp) the elements are not moved in memory: the buffers hold
// nothing of meaning, and only the all-to-all, whose counts are exact, is simulated.
void BoxExchange::forward(const float* held, float* wanted, TrafficCounter& traffic) {
  const bool elements = !sim::kernels_skipped();
  if (anything_moves_) {
    if (elements) pack(send_runs_, send_displs_, &Run::held, held, send_.data());
    all_to_all_v(comm_, send_.span().first(send_total_), send_counts_, send_displs_,
                 recv_.span().first(recv_total_), recv_counts_, recv_displs_, traffic);
    if (elements) unpack(recv_runs_, recv_displs_, &Run::wanted, recv_.data(), wanted, false);
  }
  if (held == wanted || !elements) return;
  for (const Run& run : self_runs_) {
    std::memcpy(wanted + run.wanted, held + run.held, run.length * sizeof(float));
  }
}

void BoxExchange::reverse_add(const float* wanted_grad, float* held_grad, TrafficCounter& traffic) {
  const bool elements = !sim::kernels_skipped();
  if (anything_moves_) {
    // The forward's receive lists, read backwards: what this rank wanted goes back to its holder.
    if (elements) pack(recv_runs_, recv_displs_, &Run::wanted, wanted_grad, recv_.data());
    all_to_all_v(comm_, recv_.span().first(recv_total_), recv_counts_, recv_displs_,
                 send_.span().first(send_total_), send_counts_, send_displs_, traffic);
    if (elements) unpack(send_runs_, send_displs_, &Run::held, send_.data(), held_grad, true);
  }
  if (held_grad == wanted_grad || !elements) return;
  for (const Run& run : self_runs_) {
    float* dst = held_grad + run.held;
    const float* src = wanted_grad + run.wanted;
    add_into(dst, src, run.length);
  }
}

}  // namespace convgrid
