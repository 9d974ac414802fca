// The streamed grid algorithm's three passes (see streamed_conv.hpp for the data movement).
#include "algo/streamed_conv.hpp"

#include <mpi.h>

#include <algorithm>
#include <numeric>
#include <span>

#include <fmt/format.h>

#include "algo/input_gradient.hpp"
#include "algo/pass_buffers.hpp"
#include "comm/collectives.hpp"
#include "convgrid/error.hpp"
#include "comm/exchange.hpp"
#include "layout/fibre_slices.hpp"
#include "kernel/vector_loops.hpp"
#include "layout/pack.hpp"
#include "model/streamed_volume.hpp"

namespace convgrid {
namespace {

using namespace pass_buffers;  // ensure, total, displacements, cspan, mspan, now

// Adds a chunk of samples of a block (box order, in `chunk_values`) into the block kept in the
// slice order of a fibre's reduce-scatter: slices[j] at acc + displs[j].
void add_chunk_in_slice_order(const std::vector<Slice>& slices, const std::vector<int64_t>& displs,
                              const Box4& block, Range samples, const float* chunk_values, float* acc) {
  Box4 chunk = block;
  chunk.r[0] = samples.shifted(block.r[0].begin);
  for (size_t j = 0; j < slices.size(); ++j) {
    add_box_into_slice(slices[j], chunk, chunk, chunk_values, acc + displs[j]);
  }
}

}  // namespace

StreamedConv::StreamedConv(const ConvShape& shape, const ProcessGrid& grid, StreamOptions options,
                           Backend backend)
    : grid_(grid), layout_(shape, grid.dims()), options_(options), backend_(backend) {
  if (shape.groups != 1) {
    throw InputError(fmt::format("the streamed algorithm does not run grouped layers (groups={} in {}): plan "
                                 "the grid algorithm",
                                 shape.groups, shape.to_string()));
  }
  if (options_.panels < 1 || options_.pieces < 1) {
    throw InputError(fmt::format("streaming needs panels >= 1 and pieces >= 1 (got {} and {})",
                                 options_.panels, options_.pieces));
  }
  const GridCoord g = coord();
  in_block_box_ = layout_.in_block(g);
  in_needed_box_ = layout_.in_needed(g);
  out_box_ = layout_.out_block(g);
  ker_box_ = layout_.ker_block(g);
  halo_recv_ = layout_.halo_recv(g);
  halo_send_ = layout_.halo_send(g);
  const FibreSlices f(layout_, g);
  in_slices_ = f.in;
  in_counts_ = f.in_read;
  out_slices_ = f.out;
  out_counts_ = f.out_size;
  ker_slices_ = f.ker;
  ker_counts_ = f.ker_size;
  input_in_place_ = layout_.input_in_place(g);
  strided_ok_ = backend_ == Backend::onednn;
  strided_in_ok_ = strided_ok_ && halo_recv_.empty() && halo_send_.empty() && in_needed_box_ == in_block_box_;
}

std::vector<Range> StreamedConv::panels(Pass p) const {
  return stream_panels(layout_, coord(), p, options_.panels);
}

StreamedConv::Gather StreamedConv::make_gather(const Communicator& fibre,
                                               const std::vector<Slice>& slices,
                                               const ReadPixels* read, const Box4& part,
                                               int64_t me, bool strided_ok) const {
  Gather g{&fibre, &slices, read, part, {}, {}, me, panel_in_place(slices, part, strided_ok)};
  for (const Slice& s : slices) g.counts.push_back(count_part(s, read, part));
  g.displs = displacements(g.counts);
  return g;
}

Request StreamedConv::post(const Gather& g, const float* slice, Buffer& send, Buffer& recv,
                           TrafficCounter& traffic) {
  if (g.slices->size() == 1) return {};  // a fibre of one: finish() copies from the slice itself
  const int64_t mine = g.counts[g.me];
  float* s = ensure(send, mine);
  float* r = ensure(recv, total(g.counts));
  pack_part((*g.slices)[g.me], g.read, g.part, slice, s);
  return all_gather_v_async(*g.fibre, cspan(s, mine), mspan(r, total(g.counts)), g.counts,
                            g.displs, traffic);
}

const float* StreamedConv::finish(const Gather& g, const float* slice, const Buffer& recv, Buffer& block) {
  if (g.view) return slice + g.view->offset;
  float* b = ensure(block, g.part.volume());
  if (g.slices->size() == 1) {
    copy_part(g.slices->front(), g.read, g.part, slice, g.part, b);
    return b;
  }
  for (size_t j = 0; j < g.slices->size(); ++j) {
    unpack_part((*g.slices)[j], g.read, g.part, recv.data() + g.displs[j], g.part, b, false);
  }
  return b;
}

void StreamedConv::halo_into(const Box4& part, const float* owned, float* needed,
                             TrafficCounter& traffic) {
  const ReadPixels* read = &layout_.read();
  Box4 need = in_needed_box_;
  need.r[0] = part.r[0];
  need.r[1] = part.r[1];
  if (needed != nullptr) copy_box(Slice::whole(need.intersect(part)), read, part, owned, need, needed);
  const auto clip = [&](const Box4& b) { return b.clipped(0, part.r[0]).clipped(1, part.r[1]); };
  int64_t send_words = 0, recv_words = 0;
  for (const HaloPiece& p : halo_send_) send_words += count_part(Slice::whole(clip(p.box)), read, clip(p.box));
  for (const HaloPiece& p : halo_recv_) recv_words += count_part(Slice::whole(clip(p.box)), read, clip(p.box));
  float* send = ensure(halo_send_buf_, send_words);
  float* recv = ensure(halo_recv_buf_, recv_words);
  sends_.clear();
  recvs_.clear();
  int64_t offset = 0;
  for (const HaloPiece& p : halo_send_) {
    const Box4 b = clip(p.box);
    const int64_t n = pack_box(Slice::whole(b), read, part, owned, send + offset);
    sends_.push_back({static_cast<int>(p.peer), send + offset, n});
    offset += n;
  }
  offset = 0;
  for (const HaloPiece& p : halo_recv_) {
    const Box4 b = clip(p.box);
    const int64_t n = count_part(Slice::whole(b), read, b);
    recvs_.push_back({static_cast<int>(p.peer), recv + offset, n});
    offset += n;
  }
  exchange(grid_.spatial(), sends_, recvs_, traffic);
  if (recv_words > 0 && needed == nullptr) throw Error("streamed halo: received pixels have no needed buffer");
  offset = 0;
  for (const HaloPiece& p : halo_recv_) {
    const Box4 b = clip(p.box);
    offset += unpack_box(Slice::whole(b), read, recv + offset, need, needed, false);
  }
}

LocalConv& StreamedConv::local(const ConvShape& s, const PlainStrides& strides) {
  const auto key = std::make_tuple(s.N, s.C, s.K, strides);
  auto it = locals_.find(key);
  if (it == locals_.end()) it = locals_.try_emplace(key, s, /*with_bias=*/false, backend_, strides).first;
  return it->second;
}

template <class Op>
void StreamedConv::compute_in_pieces(int64_t n, std::vector<Request>& pending, Op&& op) {
  const int64_t pieces = std::min(options_.pieces, n);
  for (int64_t i = 0; i < pieces; ++i) {
    const double t = now();
    if (options_.local_work) op(balanced_block(n, pieces, i));
    seconds_.compute += now() - t;
    const double c = now();
    for (Request& r : pending) r.test();  // lets MPI advance the next panel's gathers
    for (Request& r : reductions_) r.test();  // and the earlier panels' reduce-scatters
    seconds_.comm += now() - c;
  }
}

// The pipeline every pass runs: panel i's two gathers complete and are unpacked (with the halo of
// the In panel when `haloed`), panel i+1's are posted, then panel i is computed in pieces while
// panel i+1's requests are tested.
template <class Compute>
void StreamedConv::stream(const std::vector<Gather>& ga, const float* a, const std::vector<Gather>& gb,
                          const float* b, bool haloed, TrafficCounter& traffic, Compute&& compute) {
  const auto post_panel = [&](size_t i) {
    std::vector<Request> r;
    r.push_back(post(ga[i], a, send_a_[i % 2], recv_a_[i % 2], traffic));
    r.push_back(post(gb[i], b, send_b_[i % 2], recv_b_[i % 2], traffic));
    return r;
  };
  double t = now();
  std::vector<Request> current = post_panel(0);
  seconds_.comm += now() - t;
  for (size_t i = 0; i < ga.size(); ++i) {
    t = now();
    for (Request& r : current) r.wait();
    operand_a_ = finish(ga[i], a, recv_a_[i % 2], panel_a_);
    operand_b_ = finish(gb[i], b, recv_b_[i % 2], panel_b_);
    lead_a_ = ga[i].view ? ga[i].view->lead : 0;
    lead_b_ = gb[i].view ? gb[i].view->lead : 0;
    if (haloed) {
      Box4 need = in_needed_box_;
      need.r[0] = ga[i].part.r[0];
      need.r[1] = ga[i].part.r[1];
      // When the panel's needed input is its owned block, the kernel reads the panel itself
      // (the halo then only sends); otherwise a dense haloed copy.
      float* buf = need == ga[i].part ? nullptr : ensure(needed_, need.volume());
      halo_into(ga[i].part, operand_a_, buf, traffic);
      needed_input_ = buf == nullptr ? operand_a_ : buf;
      if (buf != nullptr) lead_a_ = 0;
    }
    std::vector<Request> next = i + 1 < ga.size() ? post_panel(i + 1) : std::vector<Request>{};
    seconds_.comm += now() - t;
    compute(i, next);
    current = std::move(next);
  }
}

void StreamedConv::forward(const float* in, const float* ker, float* out, TrafficCounter& traffic) {
  seconds_ = {};
  const GridCoord g = coord();
  const GridDims& d = grid_.dims();
  const std::vector<Range> ps = panels(Pass::forward);
  const ConvShape whole = layout_.local_shape(g);
  const int64_t out_n = whole.K * whole.Ho() * whole.Wo();  // one sample's output
  // With Pc = 1 the rank's Out slice is its whole block: sum into it. Otherwise sum into accum_ in
  // the c-fibre's slice order, which the reduce-scatter then sends as it is.
  const bool in_slice_order = d.Pc > 1;
  float* acc = in_slice_order ? ensure(accum_, out_box_.volume()) : out;
  if (in_slice_order) std::fill(acc, acc + out_box_.volume(), 0.0f);
  const std::vector<int64_t> displs = displacements(out_counts_);
  std::vector<Gather> gin, gker;
  for (const Range& p : ps) {
    gin.push_back(make_gather(grid_.k_fibre(), in_slices_, &layout_.read(), in_block_box_.clipped(1, p), g.k,
                              strided_in_ok_));
    gker.push_back(make_gather(grid_.nhw_fibre(), ker_slices_, nullptr, ker_box_.clipped(1, p), d.nhw_index(g),
                               strided_ok_));
  }
  stream(gin, in, gker, ker, /*haloed=*/true, traffic, [&](size_t i, std::vector<Request>& next) {
    const float* needed = needed_input_;
    ConvShape s = whole;
    s.C = ps[i].size();
    const int64_t in_n = lead_a_ != 0 ? lead_a_ : s.C * s.H * s.W;
    const PlainStrides strides{.input = lead_a_, .weights = lead_b_};
    compute_in_pieces(s.N, next, [&](Range samples) {
      ConvShape c = s;
      c.N = samples.size();
      if (!in_slice_order && i == 0) {
        local(c, strides).forward(needed + samples.begin * in_n, operand_b_, nullptr, acc + samples.begin * out_n);
        return;
      }
      float* tmp = ensure(temp_, c.N * out_n);
      local(c, strides).forward(needed + samples.begin * in_n, operand_b_, nullptr, tmp);
      if (!in_slice_order) {
        add_into(acc + samples.begin * out_n, tmp, c.N * out_n);
        return;
      }
      add_chunk_in_slice_order(out_slices_, displs, out_box_, samples, tmp, acc);
    });
  });
  if (!in_slice_order) return;
  // Out[n,k,h,w | c-slice] := reduce-scatter of the partial block over c-fibre.
  const double t = now();
  reduce_scatter(grid_.c_fibre(), cspan(acc, total(out_counts_)), mspan(out, out_counts_[g.c]),
                 out_counts_, traffic);
  seconds_.comm += now() - t;
}

void StreamedConv::backward_data(const float* dout, const float* ker, float* din,
                                 TrafficCounter& traffic) {
  seconds_ = {};
  const GridCoord g = coord();
  const GridDims& d = grid_.dims();
  const std::vector<Range> ps = panels(Pass::backward_data);
  const ConvShape whole = layout_.local_shape(g);
  const int64_t in_n = whole.C * whole.H * whole.W;  // one sample's needed input
  // Without halo either way and with every pixel read, the needed input is the owned block and
  // dIn~ can be summed in the k-fibre's slice order and reduce-scattered as it is.
  const bool in_slice_order = !input_in_place_ && halo_recv_.empty() && halo_send_.empty() &&
                              in_needed_box_ == in_block_box_ && layout_.read().all_read();
  float* acc = input_in_place_ ? din : ensure(accum_, in_needed_box_.volume());
  if (in_slice_order) std::fill(acc, acc + in_needed_box_.volume(), 0.0f);
  const std::vector<int64_t> displs = displacements(in_counts_);
  std::vector<Gather> gdout, gker;
  for (const Range& p : ps) {
    gdout.push_back(make_gather(grid_.c_fibre(), out_slices_, nullptr, out_box_.clipped(1, p), g.c, strided_ok_));
    gker.push_back(make_gather(grid_.nhw_fibre(), ker_slices_, nullptr, ker_box_.clipped(0, p), d.nhw_index(g),
                               strided_ok_));
  }
  stream(gdout, dout, gker, ker, /*haloed=*/false, traffic, [&](size_t i, std::vector<Request>& next) {
    ConvShape s = whole;
    s.K = ps[i].size();
    const int64_t out_n = lead_a_ != 0 ? lead_a_ : s.K * s.Ho() * s.Wo();
    const PlainStrides strides{.grad_output = lead_a_, .weights = lead_b_};
    compute_in_pieces(s.N, next, [&](Range samples) {
      ConvShape c = s;
      c.N = samples.size();
      float* dst = acc + samples.begin * in_n;
      if (i == 0 && !in_slice_order) {
        local(c, strides).backward_data(operand_a_ + samples.begin * out_n, operand_b_, dst);
        return;
      }
      float* tmp = ensure(temp_, c.N * in_n);
      local(c, strides).backward_data(operand_a_ + samples.begin * out_n, operand_b_, tmp);
      if (in_slice_order) {
        add_chunk_in_slice_order(in_slices_, displs, in_block_box_, samples, tmp, acc);
      } else {
        add_into(dst, tmp, c.N * in_n);
      }
    });
  });
  if (input_in_place_) return;
  const double t = now();
  if (in_slice_order) {
    // dIn[n,c | k-slice] := reduce-scatter of the summed block over k-fibre, straight into dIn.
    reduce_scatter(grid_.k_fibre(), cspan(acc, total(in_counts_)), mspan(din, in_counts_[g.k]),
                   in_counts_, traffic);
  } else {
    reduce_input_gradient(layout_, grid_, grid_.k_fibre(), acc, din, {din_block_, temp_, din_recv_, sends_, recvs_}, traffic);
  }
  seconds_.comm += now() - t;
}

void StreamedConv::backward_weights(const float* dout, const float* in, float* dker,
                                    TrafficCounter& traffic) {
  seconds_ = {};
  const GridCoord g = coord();
  const GridDims& d = grid_.dims();
  const std::vector<Range> ps = panels(Pass::backward_weights);
  const ConvShape whole = layout_.local_shape(g);
  const int64_t in_n = whole.C * whole.H * whole.W, out_n = whole.K * whole.Ho() * whole.Wo();
  const int64_t ker_n = ker_box_.volume();
  float* acc = d.nhw_size() == 1 ? dker : ensure(accum_, ker_n);
  if (weights_in_filter_panels(layout_, g)) {
    backward_weights_by_filters(ps, dout, in, acc, dker, traffic);
    return;
  }
  std::vector<Gather> gin, gdout;
  for (const Range& p : ps) {
    gin.push_back(make_gather(grid_.k_fibre(), in_slices_, &layout_.read(), in_block_box_.clipped(0, p), g.k,
                              strided_in_ok_));
    gdout.push_back(make_gather(grid_.c_fibre(), out_slices_, nullptr, out_box_.clipped(0, p), g.c, strided_ok_));
  }
  stream(gin, in, gdout, dout, /*haloed=*/true, traffic, [&](size_t i, std::vector<Request>& next) {
    const float* needed = needed_input_;
    ConvShape s = whole;
    s.N = ps[i].size();
    const int64_t in_step = lead_a_ != 0 ? lead_a_ : in_n, out_step = lead_b_ != 0 ? lead_b_ : out_n;
    const PlainStrides strides{.input = lead_a_, .grad_output = lead_b_};
    compute_in_pieces(s.N, next, [&](Range samples) {
      ConvShape c = s;
      c.N = samples.size();
      const bool first = i == 0 && samples.begin == 0;
      float* dst = first ? acc : ensure(temp_, ker_n);
      local(c, strides).backward_weights(operand_b_ + samples.begin * out_step, needed + samples.begin * in_step,
                                         dst, nullptr);
      if (!first) add_into(acc, dst, ker_n);
    });
  });
  if (d.nhw_size() == 1) return;
  // dKer[k,c | nhw-slice] := reduce-scatter of the partial block over nhw-fibre.
  const double t = now();
  reduce_scatter(grid_.nhw_fibre(), cspan(acc, ker_n), mspan(dker, ker_counts_[d.nhw_index(g)]),
                 ker_counts_, traffic);
  seconds_.comm += now() - t;
}

// Filter panels (weights_in_filter_panels): In is read in place, whole, by every panel; panel i's
// dOut channels are gathered over the c-fibre as in backward-data; once panel i's dKer rows are
// summed over all samples, their reduce-scatter over the nhw-fibre is posted and tested while the
// later panels compute.
void StreamedConv::backward_weights_by_filters(const std::vector<Range>& ps, const float* dout, const float* in,
                                               float* acc, float* dker, TrafficCounter& traffic) {
  const GridCoord g = coord();
  const GridDims& d = grid_.dims();
  const ConvShape whole = layout_.local_shape(g);
  const int64_t in_n = whole.C * whole.H * whole.W;
  const int64_t me = d.nhw_index(g);
  const Range mine = ker_slices_[me].flat;
  std::vector<Gather> gin, gdout;
  for (const Range& p : ps) {
    gin.push_back(make_gather(grid_.k_fibre(), in_slices_, &layout_.read(), in_block_box_, g.k, strided_in_ok_));
    gdout.push_back(make_gather(grid_.c_fibre(), out_slices_, nullptr, out_box_.clipped(1, p), g.c, strided_ok_));
  }
  reductions_.clear();
  stream(gin, in, gdout, dout, /*haloed=*/false, traffic, [&](size_t i, std::vector<Request>& next) {
    ConvShape s = whole;
    s.K = ps[i].size();
    const Range flat = filter_panel_flat(ker_box_, ps[i]);
    const int64_t panel_n = flat.size();
    float* panel = acc + flat.begin;
    const int64_t in_step = lead_a_ != 0 ? lead_a_ : in_n, out_step = lead_b_ != 0 ? lead_b_ : s.K * s.Ho() * s.Wo();
    const PlainStrides strides{.input = lead_a_, .grad_output = lead_b_};
    compute_in_pieces(s.N, next, [&](Range samples) {
      ConvShape c = s;
      c.N = samples.size();
      const bool first = samples.begin == 0;
      float* dst = first ? panel : ensure(temp_, panel_n);
      local(c, strides).backward_weights(operand_b_ + samples.begin * out_step, operand_a_ + samples.begin * in_step,
                                         dst, nullptr);
      if (!first) add_into(panel, dst, panel_n);
    });
    // dKer[panel's filters | nhw-slice] := reduce-scatter of the panel's rows over nhw-fibre.
    const double t = now();
    const std::vector<int64_t> counts = filter_panel_counts(ker_slices_, flat);
    const Range own = mine.intersect(flat);  // empty ones start past the slice: keep them at its end
    float* own_dker = dker + (std::min(own.begin, mine.end) - mine.begin);
    reductions_.push_back(reduce_scatter_async(grid_.nhw_fibre(), cspan(panel, panel_n), mspan(own_dker, own.size()),
                                               counts, traffic));
    seconds_.comm += now() - t;
  });
  const double t = now();
  for (Request& r : reductions_) r.wait();
  reductions_.clear();
  seconds_.comm += now() - t;
}

}  // namespace convgrid
