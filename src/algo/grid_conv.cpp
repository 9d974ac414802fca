// The grid algorithm's three passes (see grid_conv.hpp for the data movement of each).
#include "algo/grid_conv.hpp"

#include <mpi.h>

#include <algorithm>
#include <numeric>
#include <span>

#include "comm/collectives.hpp"
#include "algo/input_gradient.hpp"
#include "comm/exchange.hpp"
#include "layout/fibre_slices.hpp"
#include "layout/pack.hpp"
#include "algo/pass_buffers.hpp"

namespace convgrid {

using namespace pass_buffers;  // ensure, total, displacements, cspan, mspan, now

GridConv::GridConv(const ConvShape& shape, const ProcessGrid& grid, Backend backend)
    : grid_(grid),
      layout_(shape, grid.dims()),
      in_fibre_(grid.k_fibre_part(layout_.in_fibre_size())),
      input_in_place_(layout_.input_inside_block(grid.coord())),
      local_(input_in_place_ ? layout_.block_shape(grid.coord()) : layout_.local_shape(grid.coord()),
             /*with_bias=*/false, backend) {
  const GridCoord g = coord();
  local_.reuse_reordered_inputs(true);
  in_block_box_ = layout_.in_block(g);
  in_needed_box_ = layout_.in_needed(g);
  out_box_ = layout_.out_block(g);
  halo_recv_ = layout_.halo_recv(g);
  halo_send_ = layout_.halo_send(g);
  for (const HaloPiece& p : halo_recv_) halo_recv_words_ += p.words;
  for (const HaloPiece& p : halo_send_) halo_send_words_ += p.words;
  const FibreSlices f(layout_, g);
  in_slices_ = f.in;
  in_counts_ = f.in_read;
  out_slices_ = f.out;
  out_counts_ = f.out_size;
  ker_counts_ = f.ker_size;
  for (const Slice& k : f.ker) ker_displs_.push_back(k.flat.begin);
  in_displs_ = displacements(in_counts_);
  out_displs_ = displacements(out_counts_);
}

template <class F>
void GridConv::timed_comm(F&& f) {
  double t = now();
  f();
  seconds_.comm += now() - t;
}

template <class F>
void GridConv::timed_compute(F&& f) {
  double t = now();
  f();
  seconds_.compute += now() - t;
}

// In[n,c | block] := all-gather over the input fibre (the k-fibre, or its ranks of one group);
// In[halo] := point to point over the spatial fibre.
void GridConv::gather_input(const float* in, TrafficCounter& traffic) {
  if (input_in_place_) {  // the needed input lies inside the at-rest slice: use it where it is
    in_local_ = in;
    return;
  }
  const ReadPixels* read = &layout_.read();
  const int64_t me = coord().k % layout_.in_fibre_size();
  float* block = ensure(in_block_, in_block_box_.volume());
  float* needed = ensure(in_needed_, in_needed_box_.volume());
  float* send = ensure(send_, std::max(in_counts_[me], halo_send_words_));
  float* recv = ensure(recv_, std::max(total(in_counts_), halo_recv_words_));

  pack_slice(in_slices_[me], read, in, send);
  all_gather_v(in_fibre_, cspan(send, in_counts_[me]), mspan(recv, total(in_counts_)),
               in_counts_, in_displs_, traffic);
  for (size_t j = 0; j < in_slices_.size(); ++j) {
    unpack_box(in_slices_[j], read, recv + in_displs_[j], in_block_box_, block, false);
  }

  copy_box(Slice::whole(in_needed_box_.intersect(in_block_box_)), read, in_block_box_, block,
           in_needed_box_, needed);
  exchange_pieces(halo_send_, in_block_box_, block, halo_recv_, in_needed_box_, needed,
                  /*add=*/false, send, recv, traffic);
  in_local_ = needed;
}

// Point to point over the spatial fibre: each of `outgoing` is packed (read pixels) from the box
// buffer (src_box, src) through `send`, each of `incoming` arrives in `recv` and is unpacked into
// (dst_box, dst), written or added.
void GridConv::exchange_pieces(const std::vector<HaloPiece>& outgoing, const Box4& src_box,
                               const float* src, const std::vector<HaloPiece>& incoming,
                               const Box4& dst_box, float* dst, bool add, float* send, float* recv,
                               TrafficCounter& traffic) {
  const ReadPixels* read = &layout_.read();
  sends_.clear();  // kept vectors: no allocation once they have grown
  recvs_.clear();
  int64_t offset = 0;
  for (const HaloPiece& p : outgoing) {
    pack_box(Slice::whole(p.box), read, src_box, src, send + offset);
    sends_.push_back({static_cast<int>(p.peer), send + offset, p.words});
    offset += p.words;
  }
  offset = 0;
  for (const HaloPiece& p : incoming) {
    recvs_.push_back({static_cast<int>(p.peer), recv + offset, p.words});
    offset += p.words;
  }
  exchange(grid_.spatial(), sends_, recvs_, traffic);
  offset = 0;
  for (const HaloPiece& p : incoming) {
    unpack_box(Slice::whole(p.box), read, recv + offset, dst_box, dst, add);
    offset += p.words;
  }
}

// Ker[k,c | block] := all-gather over nhw-fibre (the flat slices are in block order).
void GridConv::gather_weights(const float* ker, TrafficCounter& traffic) {
  if (grid_.dims().nhw_size() == 1) {
    ker_local_ = ker;
    return;
  }
  const int64_t me = grid_.dims().nhw_index(coord());
  float* block = ensure(ker_block_, total(ker_counts_));
  all_gather_v(grid_.nhw_fibre(), cspan(ker, ker_counts_[me]), mspan(block, total(ker_counts_)),
               ker_counts_, ker_displs_, traffic);
  ker_local_ = block;
}

// dOut[n,k,h,w | block] := all-gather over c-fibre.
void GridConv::gather_grad_output(const float* dout, TrafficCounter& traffic) {
  if (grid_.dims().Pc == 1) {
    dout_local_ = dout;
    return;
  }
  const int64_t me = coord().c;
  float* block = ensure(dout_block_, out_box_.volume());
  float* recv = ensure(recv_, total(out_counts_));
  all_gather_v(grid_.c_fibre(), cspan(dout, out_counts_[me]), mspan(recv, total(out_counts_)),
               out_counts_, out_displs_, traffic);
  for (size_t j = 0; j < out_slices_.size(); ++j) {
    unpack_box(out_slices_[j], nullptr, recv + out_displs_[j], out_box_, block, false);
  }
  dout_local_ = block;
}

void GridConv::forward(const float* in, const float* ker, float* out, TrafficCounter& traffic) {
  seconds_ = {};
  timed_comm([&] {
    if (!held_.in_needed) gather_input(in, traffic);
    if (!held_.ker_block) gather_weights(ker, traffic);
  });
  held_ = held_after(Pass::forward, held_);
  if (grid_.dims().Pc == 1) {  // the partial block is the finished slice
    timed_compute([&] { local_.forward(in_local_, ker_local_, nullptr, out); });
    return;
  }
  float* partial = ensure(out_partial_, out_box_.volume());
  timed_compute([&] { local_.forward(in_local_, ker_local_, nullptr, partial); });
  // Out[n,k,h,w | c-slice] := reduce-scatter of the partial block over c-fibre.
  timed_comm([&] {
    float* send = ensure(send_, total(out_counts_));
    for (size_t j = 0; j < out_slices_.size(); ++j) {
      pack_box(out_slices_[j], nullptr, out_box_, partial, send + out_displs_[j]);
    }
    reduce_scatter(grid_.c_fibre(), cspan(send, total(out_counts_)),
                   mspan(out, out_counts_[coord().c]), out_counts_, traffic);
  });
}

void GridConv::backward_data(const float* dout, const float* ker, float* din,
                             TrafficCounter& traffic) {
  seconds_ = {};
  timed_comm([&] {
    if (!held_.dout_block) gather_grad_output(dout, traffic);
    if (!held_.ker_block) gather_weights(ker, traffic);
  });
  held_ = held_after(Pass::backward_data, held_);
  if (input_in_place_) {  // the needed input lies inside the at-rest slice: no halo, no k-fibre
    timed_compute([&] { local_.backward_data(dout_local_, ker_local_, din); });
    return;
  }
  float* dneeded = ensure(din_needed_, in_needed_box_.volume());
  timed_compute([&] { local_.backward_data(dout_local_, ker_local_, dneeded); });

  timed_comm([&] { reduce_input_gradient(layout_, grid_, in_fibre_, dneeded, din,
                                         {din_block_, din_send_, din_recv_, sends_, recvs_}, traffic); });
}

void GridConv::backward_weights(const float* dout, const float* in, float* dker,
                                TrafficCounter& traffic) {
  seconds_ = {};
  timed_comm([&] {
    if (!held_.in_needed) gather_input(in, traffic);
    if (!held_.dout_block) gather_grad_output(dout, traffic);
  });
  held_ = held_after(Pass::backward_weights, held_);
  if (grid_.dims().nhw_size() == 1) {  // the partial block is the finished slice
    timed_compute([&] { local_.backward_weights(dout_local_, in_local_, dker, nullptr); });
    return;
  }
  float* dblock = ensure(dker_block_, total(ker_counts_));
  timed_compute([&] { local_.backward_weights(dout_local_, in_local_, dblock, nullptr); });
  // dKer[k,c | nhw-slice] := reduce-scatter of the partial block over nhw-fibre.
  timed_comm([&] {
    const int64_t me = grid_.dims().nhw_index(coord());
    reduce_scatter(grid_.nhw_fibre(), cspan(dblock, total(ker_counts_)),
                   mspan(dker, ker_counts_[me]), ker_counts_, traffic);
  });
}

}  // namespace convgrid
