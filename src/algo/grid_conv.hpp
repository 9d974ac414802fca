// The grid algorithm (SPEC section 4): the CNN analogue of the 3D matrix-multiplication
// algorithm on a Pn x Pk x Pc x Ph x Pw grid, for the three passes.
//
// Forward (rank g holds its at-rest slices of In and Ker, see layout/layer_layout.hpp):
//   In[n,c | rows,cols of g]   := all-gather over the input fibre (read pixels only): the k-fibre,
//                                 or with groups its ranks of g's group (none when Pk <= G)
//   In[halo of g]              := point to point from the spatial fibre (incl. corners)
//   Ker[k,c | block of g]      := all-gather over nhw-fibre
//   Out~[n,k,h,w | c-block]    := local convolution of the gathered blocks
//   Out[n,k,h,w | c-slice]     := reduce-scatter of Out~ over c-fibre
// Backward-data:
//   dOut[n,k,h,w | block of g] := all-gather over c-fibre
//   dIn~[needed input of g]    := local backward-data with the Ker block kept from forward
//   dIn~[owned block]         += reverse halo (point to point to the owners)
//   dIn[n,c | k-slice]         := reduce-scatter of dIn~ over the input fibre (read pixels only)
// Backward-weights:
//   dKer~[k,c | block of g]    := local backward-weights of the gathered dOut and haloed In
//   dKer[k,c | nhw-slice]      := reduce-scatter of dKer~ over nhw-fibre
//
// Grouped layers (G > 1) run the same passes: the local kernel is grouped when g holds several
// groups, and the k-fibre collectives shrink to the input fibre, so a depthwise layer split over
// channels, samples and space moves only halos and weights.
//
// Worked example, grid 2,1,1,2,1 (4 ranks, data x spatial): no k- or c-fibre traffic; each rank
// gathers the whole Ker over its 4-rank nhw-fibre, exchanges halo rows with the rank of the same
// pn and the other ph, and reduce-scatters dKer over all 4 ranks (the data-parallel all-reduce).
//
// Operands gathered by one pass are kept for the next ones of the same step (Held): backward-data
// reuses the Ker block, backward-weights the haloed In and the dOut block. new_step() forgets them.
// Where a gathered block is the at-rest slice itself (no k-fibre and no halo for In, a one-rank
// nhw-fibre for Ker, no c-fibre for Out and dOut) nothing is copied: the local kernel reads and
// writes the caller's slice, which must then stay unchanged until new_step(). The local kernel
// likewise reorders each operand into its blocked layout once a step: backward-weights reads the
// input forward reordered and the output gradient backward-data reordered.
// Every buffer is allocated on first use and reused; the communicators belong to the ProcessGrid.
#pragma once

#include <cstdint>
#include <vector>

#include "algo/input_gradient.hpp"
#include "comm/exchange.hpp"
#include "comm/traffic.hpp"
#include "convgrid/local_conv.hpp"
#include "convgrid/memory.hpp"
#include "grid/process_grid.hpp"
#include "layout/layer_layout.hpp"
#include "model/grid_volume.hpp"

namespace convgrid {

// Seconds one pass spent communicating (packing included) and in the local kernel.
struct PassSeconds {
  double comm = 0;
  double compute = 0;
};

class GridConv {
 public:
  GridConv(const ConvShape& shape, const ProcessGrid& grid, Backend backend = Backend::onednn);

  const LayerLayout& layout() const { return layout_; }
  GridCoord coord() const { return grid_.coord(); }
  // Sizes of this rank's at-rest slices (elements).
  int64_t in_slice_size() const { return layout_.in_slice(coord()).size(); }
  int64_t ker_slice_size() const { return layout_.ker_slice(coord()).size(); }
  int64_t out_slice_size() const { return layout_.out_slice(coord()).size(); }

  // Each call reads and writes this rank's at-rest slices and adds what it received to `traffic`.
  void forward(const float* in, const float* ker, float* out, TrafficCounter& traffic);
  void backward_data(const float* dout, const float* ker, float* din, TrafficCounter& traffic);
  void backward_weights(const float* dout, const float* in, float* dker, TrafficCounter& traffic);

  // Forgets the operands kept from earlier passes (call when the data changes).
  void new_step() {
    held_ = {};
    local_.inputs_changed();
  }
  const PassSeconds& last_seconds() const { return seconds_; }

 private:
  void gather_input(const float* in, TrafficCounter& traffic);
  void gather_weights(const float* ker, TrafficCounter& traffic);
  void gather_grad_output(const float* dout, TrafficCounter& traffic);
  void exchange_pieces(const std::vector<HaloPiece>& outgoing, const Box4& src_box, const float* src,
                       const std::vector<HaloPiece>& incoming, const Box4& dst_box, float* dst,
                       bool add, float* send, float* recv, TrafficCounter& traffic);
  template <class F>
  void timed_comm(F&& f);
  template <class F>
  void timed_compute(F&& f);

  const ProcessGrid& grid_;
  LayerLayout layout_;
  const Communicator& in_fibre_;  // In's slices: grid_.k_fibre_part(layout_.in_fibre_size())
  bool input_in_place_;  // the kernel reads In's at-rest slice (LayerLayout::input_inside_block)
  LocalConv local_;
  Held held_;
  PassSeconds seconds_;

  Box4 in_block_box_, in_needed_box_, out_box_;
  std::vector<HaloPiece> halo_recv_, halo_send_;
  int64_t halo_recv_words_ = 0, halo_send_words_ = 0;
  std::vector<SendMessage> sends_;  // the messages of one halo exchange
  std::vector<RecvMessage> recvs_;
  std::vector<Slice> in_slices_, out_slices_;       // over the k-fibre, the c-fibre
  std::vector<int64_t> in_counts_, in_displs_;      // read pixels of each In slice
  std::vector<int64_t> out_counts_, out_displs_;
  std::vector<int64_t> ker_counts_, ker_displs_;    // flat slices of the Ker block

  // The operands of the local kernel: gathered buffers, or the caller's slices in place.
  const float* in_local_ = nullptr;
  const float* ker_local_ = nullptr;
  const float* dout_local_ = nullptr;

  Buffer in_block_, in_needed_, ker_block_, dout_block_, out_partial_;
  Buffer din_needed_, dker_block_, send_, recv_;
  Buffer din_block_, din_send_, din_recv_;  // algo/input_gradient's
};

}  // namespace convgrid
