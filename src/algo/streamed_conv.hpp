// The streamed grid algorithm (SPEC section 5): the grid algorithm of grid_conv.hpp with the
// reduction range of each rank's block cut into `b` panels that are gathered, used and dropped
// one after the other, the gathers of panel i+1 posted (non-blocking) before panel i is
// computed. With Pc = 1 (forward) it is the CNN analogue of SUMMA (2D), with Pc > 1 the 2.5D
// one. Per panel P of the reduction range:
//
// Forward (P = channels of c_block):
//   In[n_block, P | rows,cols owned]  := all-gather over k-fibre of the at-rest In slices' parts in P
//   In[halo, P]                        := point to point over the spatial fibre
//   Ker[k_block, P, R, S]              := all-gather over nhw-fibre of the flat Ker slices' parts in P
//   Out~[n,k,h,w | block]             += local convolution of the two panels
//   then, once:  Out[c-slice]          := reduce-scatter of Out~ over c-fibre
// Backward-data (P = filters of k_block):
//   dOut[n_block, P, h,w block]        := all-gather over c-fibre of the Out slices' parts in P
//   Ker[P, c_block, R, S]              := all-gather over nhw-fibre
//   dIn~[needed input]                += local backward-data of the two panels
//   then, once: reverse halo and reduce-scatter over k-fibre, as in the grid algorithm
// Backward-weights (P = samples of n_block):
//   In[P, c_block | owned] + halo      := as forward, for the samples of P
//   dOut[P, k_block, h,w block]        := all-gather over c-fibre
//   dKer~[k,c | block]                += local backward-weights of the two panels
//   then, once: dKer[nhw-slice]        := reduce-scatter over nhw-fibre
// Backward-weights where In is read in place and dKer has an nhw-fibre (P = filters of k_block;
// weights_in_filter_panels, model/streamed_volume.hpp):
//   dOut[n_block, P, h,w block]        := all-gather over c-fibre
//   dKer~[P, c_block]                  := local backward-weights of In (in place) and the panel
//   then, per panel: dKer[P | nhw-slice] := reduce-scatter over nhw-fibre, non-blocking, tested
//                                           while the later panels compute
//
// Every element a rank receives is one it receives in the grid algorithm when nothing is held
// from an earlier pass (grid_pass_volume with Held{}): the panels partition the blocks. Messages:
// one per panel per gather on a fibre of more than one rank, plus the halo messages of each panel.
// Overlap: Open MPI advances a non-blocking collective only inside MPI calls, so each panel's
// local work runs in `pieces` chunks of samples and the next panel's requests are tested
// between chunks. Nothing is kept between passes (each pass streams its operands again).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include "algo/grid_conv.hpp"
#include "algo/input_gradient.hpp"
#include "comm/request.hpp"
#include "layout/slice_view.hpp"
#include "model/streamed_volume.hpp"

namespace convgrid {

class StreamedConv {
 public:
  StreamedConv(const ConvShape& shape, const ProcessGrid& grid, StreamOptions options,
               Backend backend = Backend::onednn);

  const LayerLayout& layout() const { return layout_; }
  GridCoord coord() const { return grid_.coord(); }
  // The panels of pass p on this rank (the reduction range's sub-ranges, global indices).
  std::vector<Range> panels(Pass p) const;

  // Each call reads and writes this rank's at-rest slices and adds what it received to `traffic`.
  void forward(const float* in, const float* ker, float* out, TrafficCounter& traffic);
  void backward_data(const float* dout, const float* ker, float* din, TrafficCounter& traffic);
  void backward_weights(const float* dout, const float* in, float* dker, TrafficCounter& traffic);

  const PassSeconds& last_seconds() const { return seconds_; }

 private:
  // One operand's panel gathered over a fibre: each member's at-rest slice, the part of it in
  // `part` (read pixels only when `read` is set), into a dense buffer of the part box; or, on a
  // fibre of one rank, read where it lies in the slice (`view`) when it can be.
  struct Gather {
    const Communicator* fibre = nullptr;
    const std::vector<Slice>* slices = nullptr;  // one per member, in fibre rank order
    const ReadPixels* read = nullptr;
    Box4 part;
    std::vector<int64_t> counts, displs;
    int64_t me = 0;
    std::optional<SliceView> view;
  };
  // `strided_ok`: the panel may be read in place as a strided view.
  Gather make_gather(const Communicator& fibre, const std::vector<Slice>& slices,
                     const ReadPixels* read, const Box4& part, int64_t me, bool strided_ok) const;
  Request post(const Gather& g, const float* slice, Buffer& send, Buffer& recv, TrafficCounter& traffic);
  // The panel once its gather completed: in the slice itself, or unpacked into `block`.
  const float* finish(const Gather& g, const float* slice, const Buffer& recv, Buffer& block);
  // The haloed input of `part` (a sub-box of in_block_box_) from its owned block: own pixels, then
  // the halo pieces clipped to the part, received over the spatial fibre, into `needed`; null
  // when the part is its own haloed input (the halo then only sends).
  void halo_into(const Box4& part, const float* owned, float* needed, TrafficCounter& traffic);
  template <class Compute>
  void stream(const std::vector<Gather>& ga, const float* a, const std::vector<Gather>& gb,
              const float* b, bool haloed, TrafficCounter& traffic, Compute&& compute);
  LocalConv& local(const ConvShape& s, const PlainStrides& strides);
  // Runs `op(chunk_of_samples)` for `pieces` chunks of [0, n), testing `pending` between them.
  template <class Op>
  void compute_in_pieces(int64_t n, std::vector<Request>& pending, Op&& op);
  // Backward-weights with filter panels (model/streamed_volume.hpp, weights_in_filter_panels):
  // `acc` is the summed dKer block (the nhw-fibre's slice order is its flat order).
  void backward_weights_by_filters(const std::vector<Range>& ps, const float* dout, const float* in, float* acc,
                                   float* dker, TrafficCounter& traffic);

  const ProcessGrid& grid_;
  LayerLayout layout_;
  StreamOptions options_;
  Backend backend_;
  PassSeconds seconds_;
  // by local (N, C, K) and the strides of the panels read in place
  std::map<std::tuple<int64_t, int64_t, int64_t, PlainStrides>, LocalConv> locals_;

  Box4 in_block_box_, in_needed_box_, out_box_, ker_box_;
  std::vector<HaloPiece> halo_recv_, halo_send_;
  std::vector<Slice> in_slices_, out_slices_, ker_slices_;  // over k-, c- and nhw-fibre
  std::vector<int64_t> in_counts_, out_counts_, ker_counts_;
  bool input_in_place_ = false;
  // Panels read in place may be strided views: the local engine reads strided arrays (oneDNN);
  // for In panels also no halo piece either way and the needed input is the owned block.
  bool strided_ok_ = false, strided_in_ok_ = false;
  std::vector<Request> reductions_;  // filter panels' reduce-scatters in flight (backward-weights)
  std::vector<SendMessage> sends_;
  std::vector<RecvMessage> recvs_;

  // Double-buffered panel storage: [i % 2] for panel i.
  Buffer send_a_[2], recv_a_[2], send_b_[2], recv_b_[2];
  Buffer panel_a_, panel_b_, needed_, temp_;
  // The current panel's operands (in the slices or in panel_a_ / panel_b_) and their leading
  // strides (0: dense), and its haloed input (needed_ or operand a).
  const float* operand_a_ = nullptr;
  const float* operand_b_ = nullptr;
  int64_t lead_a_ = 0, lead_b_ = 0;
  const float* needed_input_ = nullptr;
  // accum_: the result being summed over panels (forward: in the c-fibre's slice order, as the
  // reduce-scatter sends it); temp_: one chunk's result, then the staging of the final reduction.
  Buffer accum_, halo_send_buf_, halo_recv_buf_, din_block_, din_recv_;
};

}  // namespace convgrid
