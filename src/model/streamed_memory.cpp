// The buffers StreamedConv allocates, panel by panel, mirrored from algo/streamed_conv.cpp.
#include "model/streamed_memory.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>

#include "layout/fibre_slices.hpp"
#include "layout/pack.hpp"
#include "layout/slice_view.hpp"
#include "model/streamed_volume.hpp"

namespace convgrid {
namespace {

// A kept buffer: its size is the largest asked of it.
struct Kept {
  int64_t words = 0;
  void need(int64_t n) { words = std::max(words, n); }
};

}  // namespace

int64_t streamed_memory_bytes(const LayerLayout& L, GridCoord g, const std::vector<Pass>& passes,
                              int64_t panels, int64_t pieces, Backend engine) {
  const GridDims& d = L.dims();
  const FibreSlices f(L, g);
  const ReadPixels* read = &L.read();
  const Box4 in_block = L.in_block(g), needed = L.in_needed(g), out_block = L.out_block(g),
             ker_block = L.ker_block(g);
  const ConvShape whole = L.local_shape(g);
  const int64_t in_n = whole.C * whole.H * whole.W, out_n = whole.K * whole.Ho() * whole.Wo();
  const std::vector<HaloPiece> halo_recv = L.halo_recv(g), halo_send = L.halo_send(g);
  const bool in_place = L.input_in_place(g);
  // As in StreamedConv::backward_data: no halo either way and every pixel read.
  const bool in_slice_order = !in_place && halo_recv.empty() && halo_send.empty() && needed == in_block &&
                              read->all_read();
  Kept send_a[2], recv_a[2], send_b[2], recv_b[2], panel_a, panel_b, needed_buf, temp, accum,
      halo_send_buf, halo_recv_buf, din_block, din_recv;
  // As StreamedConv::make_gather and finish: a panel read in place needs no buffer. Returns the
  // panel's leading stride for the local engine (0: dense).
  const bool onednn = engine == Backend::onednn;
  const bool halo_free = halo_recv.empty() && halo_send.empty() && needed == in_block;
  const auto gather = [&](const std::vector<Slice>& slices, const ReadPixels* r, const Box4& part,
                          int64_t me, Kept& send, Kept& recv, Kept& block, bool strided_ok) -> int64_t {
    if (const std::optional<SliceView> v = panel_in_place(slices, part, strided_ok)) return v->lead;
    block.need(part.volume());
    if (slices.size() == 1) return 0;  // copied from the slice itself, no staging
    int64_t all = 0;
    for (const Slice& s : slices) all += count_part(s, r, part);
    send.need(count_part(slices[me], r, part));
    recv.need(all);
    return 0;
  };
  const auto halo = [&](const Box4& part) {
    Box4 need = needed;
    need.r[0] = part.r[0];
    need.r[1] = part.r[1];
    if (!(need == part)) needed_buf.need(need.volume());  // else the panel is read itself
    const auto words = [&](const std::vector<HaloPiece>& pieces) {
      int64_t n = 0;
      for (const HaloPiece& p : pieces) {
        const Box4 b = p.box.clipped(0, part.r[0]).clipped(1, part.r[1]);
        n += count_part(Slice::whole(b), read, b);
      }
      return n;
    };
    halo_send_buf.need(words(halo_send));
    halo_recv_buf.need(words(halo_recv));
  };
  // The largest chunk of `n` samples in `pieces` pieces (balanced: the first).
  const auto chunk = [&](int64_t n) { return balanced_block(n, std::min(pieces, n), 0).size(); };
  bool has_in = false, has_ker = false, has_dout = false;
  int64_t slices = 0;
  // The local engines StreamedConv makes: one per (N, C, K) of a chunk and strides of the panels
  // read in place, with the passes it ran.
  std::map<std::tuple<int64_t, int64_t, int64_t, PlainStrides>, std::pair<ConvShape, std::vector<Pass>>> engines;
  const auto use_engine = [&](ConvShape s, int64_t n, Pass p, const PlainStrides& strides) {
    const int64_t parts = std::min(pieces, n);
    for (int64_t j = 0; j < parts; ++j) {
      s.N = balanced_block(n, parts, j).size();
      auto& [shape, used] =
          engines.try_emplace(std::make_tuple(s.N, s.C, s.K, strides), s, std::vector<Pass>{}).first->second;
      if (std::find(used.begin(), used.end(), p) == used.end()) used.push_back(p);
    }
  };
  for (Pass p : passes) {
    const std::vector<Range> ps = stream_panels(L, g, p, panels);
    for (size_t i = 0; i < ps.size(); ++i) {
      ConvShape s = whole;
      if (p == Pass::forward) s.C = ps[i].size();
      if (p == Pass::backward_data) s.K = ps[i].size();
      if (p == Pass::backward_weights) s.N = ps[i].size();
      const size_t slot = i % 2;
      switch (p) {
        case Pass::forward: {
          const Box4 part = in_block.clipped(1, ps[i]);
          const int64_t lead_in = gather(f.in, read, part, g.k, send_a[slot], recv_a[slot], panel_a, onednn && halo_free);
          const int64_t lead_ker = gather(f.ker, nullptr, ker_block.clipped(1, ps[i]), d.nhw_index(g), send_b[slot],
                                          recv_b[slot], panel_b, onednn);
          use_engine(s, s.N, p, PlainStrides{.input = lead_in, .weights = lead_ker});
          halo(part);
          if (i > 0 || d.Pc > 1) temp.need(chunk(whole.N) * out_n);
          break;
        }
        case Pass::backward_data: {
          const int64_t lead_dout =
              gather(f.out, nullptr, out_block.clipped(1, ps[i]), g.c, send_a[slot], recv_a[slot], panel_a, onednn);
          const int64_t lead_ker = gather(f.ker, nullptr, ker_block.clipped(0, ps[i]), d.nhw_index(g), send_b[slot],
                                          recv_b[slot], panel_b, onednn);
          use_engine(s, s.N, p, PlainStrides{.grad_output = lead_dout, .weights = lead_ker});
          if (i > 0 || in_slice_order) temp.need(chunk(whole.N) * in_n);
          break;
        }
        case Pass::backward_weights: {
          if (weights_in_filter_panels(L, g)) {  // In whole and in place, dOut and dKer by filters
            s.N = whole.N;
            s.K = ps[i].size();
            const int64_t lead_in =
                gather(f.in, read, in_block, g.k, send_a[slot], recv_a[slot], panel_a, onednn && halo_free);
            const int64_t lead_dout =
                gather(f.out, nullptr, out_block.clipped(1, ps[i]), g.c, send_b[slot], recv_b[slot], panel_b, onednn);
            use_engine(s, s.N, p, PlainStrides{.input = lead_in, .grad_output = lead_dout});
            if (std::min(pieces, s.N) > 1) temp.need(ker_block.clipped(0, ps[i]).volume());
            break;
          }
          const Box4 part = in_block.clipped(0, ps[i]);
          const int64_t lead_in = gather(f.in, read, part, g.k, send_a[slot], recv_a[slot], panel_a, onednn && halo_free);
          const int64_t lead_dout =
              gather(f.out, nullptr, out_block.clipped(0, ps[i]), g.c, send_b[slot], recv_b[slot], panel_b, onednn);
          use_engine(s, s.N, p, PlainStrides{.input = lead_in, .grad_output = lead_dout});
          halo(part);
          if (i > 0 || std::min(pieces, ps[i].size()) > 1) temp.need(ker_block.volume());
          break;
        }
      }
    }
    switch (p) {
      case Pass::forward:
        has_in = has_ker = true;
        slices += L.out_slice(g).size();
        if (d.Pc > 1) accum.need(out_block.volume());  // summed in slice order, sent as it is
        break;
      case Pass::backward_data:
        has_ker = has_dout = true;
        slices += L.in_slice(g).size();
        if (in_slice_order) {
          accum.need(needed.volume());  // summed in slice order, reduce-scattered into dIn
        } else if (!in_place) {
          accum.need(needed.volume());
          int64_t halo_in = 0, halo_out = 0;
          for (const HaloPiece& h : halo_recv) halo_in += h.words;
          for (const HaloPiece& h : halo_send) halo_out += h.words;
          if (!(needed == in_block)) din_block.need(in_block.volume());
          // The staging of the reduction is the chunk buffer, free by then.
          temp.need(std::max(halo_in, std::accumulate(f.in_read.begin(), f.in_read.end(), int64_t{0})));
          din_recv.need(std::max(halo_out, f.in_read[g.k]));
        }
        break;
      case Pass::backward_weights:
        has_in = has_dout = true;
        slices += L.ker_slice(g).size();
        if (d.nhw_size() > 1) accum.need(ker_block.volume());
        break;
    }
  }
  slices += (has_in ? L.in_slice(g).size() : 0) + (has_ker ? L.ker_slice(g).size() : 0) +
            (has_dout ? L.out_slice(g).size() : 0);
  int64_t words = slices;
  for (const Kept* k : {&send_a[0], &send_a[1], &recv_a[0], &recv_a[1], &send_b[0], &send_b[1],
                        &recv_b[0], &recv_b[1], &panel_a, &panel_b, &needed_buf, &temp, &accum,
                        &halo_send_buf, &halo_recv_buf, &din_block, &din_recv}) {
    words += k->words;
  }
  int64_t engine_total = 0;
  for (const auto& [key, engine_use] : engines) {
    engine_total += engine_bytes(engine_use.first, false, engine, engine_use.second, std::get<3>(key));
  }
  return 4 * words + engine_total;
}

}  // namespace convgrid
