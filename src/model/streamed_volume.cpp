// The streamed algorithm's traffic, panel by panel (see streamed_volume.hpp).
#include "model/streamed_volume.hpp"

#include <algorithm>

#include "layout/fibre_slices.hpp"
#include "layout/pack.hpp"
#include "model/collective_rounds.hpp"

namespace convgrid {
namespace {

Box4 with(Box4 b, int dim, Range r) {
  b.r[dim] = b.r[dim].intersect(r);
  return b;
}

// Words an all-gather of the parts in `part` of every member's slice brings to member `me`.
int64_t gathered(const std::vector<Slice>& slices, const ReadPixels* read, const Box4& part,
                 int64_t me) {
  int64_t words = 0;
  for (size_t j = 0; j < slices.size(); ++j) {
    if (static_cast<int64_t>(j) != me) words += count_part(slices[j], read, part);
  }
  return words;
}

// The halo pieces clipped to samples `n` and channels `c`: adds words and messages.
void halo(const LayerLayout& L, const std::vector<HaloPiece>& pieces, Range n, Range c, PassVolume& v) {
  for (const HaloPiece& p : pieces) {
    const Box4 b = with(with(p.box, 0, n), 1, c);
    const int64_t w = count_part(Slice::whole(b), &L.read(), b);
    v.point_to_point += w;
    v.messages += w > 0 ? 1 : 0;
    v.latency_steps += w > 0 ? 1 : 0;
  }
}

}  // namespace

std::vector<Range> stream_panels(const LayerLayout& L, GridCoord g, Pass p, int64_t panels) {
  const Range block = p == Pass::forward         ? L.c_block(g.c)
                      : p == Pass::backward_data ? L.k_block(g.k)
                                                 : L.n_block(g.n);
  const int64_t b = std::clamp<int64_t>(panels, 1, std::max<int64_t>(1, block.size()));
  std::vector<Range> out;
  for (int64_t i = 0; i < b; ++i) out.push_back(balanced_block(block.size(), b, i).shifted(block.begin));
  return out;
}

PassVolume streamed_pass_volume(const LayerLayout& L, GridCoord g, Pass p, int64_t panels) {
  const GridDims& d = L.dims();
  const FibreSlices f(L, g);
  const std::vector<Slice>&in_slices = f.in, &out_slices = f.out, &ker_slices = f.ker;
  const Box4 ker_box = L.ker_block(g), in_block = L.in_block(g), out_block = L.out_block(g);
  const int64_t me_nhw = d.nhw_index(g);
  const ReadPixels* read = &L.read();
  PassVolume v;
  const auto gather = [&](const std::vector<Slice>& slices, const ReadPixels* r, const Box4& part, int64_t me) {
    v.all_gather += gathered(slices, r, part, me);
    v.messages += slices.size() > 1 ? 1 : 0;
    v.latency_steps += nonblocking_rounds(static_cast<int64_t>(slices.size()));
  };
  const auto reduce = [&](int64_t members, int64_t own_words) {
    v.reduce_scatter += (members - 1) * own_words;
    v.messages += members > 1 ? 1 : 0;
    v.latency_steps += reduce_scatter_rounds(members);
  };
  const std::vector<HaloPiece> recv = L.halo_recv(g), send = L.halo_send(g);
  const Range all{0, INT64_MAX};
  for (const Range& P : stream_panels(L, g, p, panels)) {
    switch (p) {
      case Pass::forward:
        gather(in_slices, read, with(in_block, 1, P), g.k);
        gather(ker_slices, nullptr, with(ker_box, 1, P), me_nhw);
        halo(L, recv, all, P, v);
        break;
      case Pass::backward_data:
        gather(out_slices, nullptr, with(out_block, 1, P), g.c);
        gather(ker_slices, nullptr, with(ker_box, 0, P), me_nhw);
        break;
      case Pass::backward_weights:
        gather(in_slices, read, with(in_block, 0, P), g.k);
        gather(out_slices, nullptr, with(out_block, 0, P), g.c);
        halo(L, recv, P, all, v);
        break;
    }
  }
  switch (p) {
    case Pass::forward: reduce(d.Pc, L.out_slice(g).size()); break;
    case Pass::backward_data:
      if (!L.input_in_place(g)) {
        halo(L, send, all, all, v);  // the reverse halo receives what the forward one sent
        reduce(d.Pk, L.read_count(L.in_slice(g)));
      }
      break;
    case Pass::backward_weights: reduce(d.nhw_size(), L.ker_slice(g).size()); break;
  }
  return v;
}

}  // namespace convgrid
