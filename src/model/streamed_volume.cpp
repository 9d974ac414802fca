// The streamed algorithm's traffic, panel by panel (see streamed_volume.hpp).
#include "model/streamed_volume.hpp"

#include <algorithm>
#include <numeric>

#include "layout/fibre_slices.hpp"
#include "layout/pack.hpp"
#include "model/collective_rounds.hpp"
#include "model/node_links.hpp"

namespace convgrid {
namespace {

// A fibre's slices and where its members sit: the world rank of each, and whether it shares
// member `me`'s node.
struct FibreMembers {
  const std::vector<Slice>& slices;
  int64_t me;
  std::vector<bool> near;
  bool all_near = true;

  FibreMembers(const std::vector<Slice>& s, const GridDims& d, GridCoord g, Fibre f, int64_t me_index,
               int64_t ranks_per_node)
      : slices(s), me(me_index) {
    const std::vector<int64_t> ranks = fibre_ranks(d, g, f);
    for (size_t j = 0; j < ranks.size(); ++j) {
      near.push_back(same_node(ranks[j], ranks[me], ranks_per_node));
      if (static_cast<int64_t>(j) != me) all_near = all_near && near.back();
    }
  }
};

// The halo pieces clipped to samples `n` and channels `c`: their words and messages, in one
// round (HaloExchange).
void halo(const LayerLayout& L, GridCoord g, int64_t ranks_per_node, const std::vector<HaloPiece>& pieces,
          Range n, Range c, PassVolume& v) {
  const int64_t me = L.dims().rank_of(g);
  HaloExchange exchange;
  for (const HaloPiece& p : pieces) {
    const Box4 b = p.box.clipped(0, n).clipped(1, c);
    exchange.add(v, count_part(Slice::whole(b), &L.read(), b),
                 same_node(me, spatial_peer_rank(L.dims(), g, p.peer), ranks_per_node));
  }
  exchange.finish(v);
}

}  // namespace

bool weights_in_filter_panels(const LayerLayout& L, GridCoord g) {
  // Every member of the nhw-fibre must decide alike (they share the reduce-scatters): without a
  // spatial split the fibre's members differ only in their samples, and so do their inputs.
  const GridDims& d = L.dims();
  return d.Ph == 1 && d.Pw == 1 && d.Pn > 1 && L.input_in_place(g);
}

std::vector<Range> stream_panels(const LayerLayout& L, GridCoord g, Pass p, int64_t panels) {
  const Range block = p == Pass::forward                ? L.c_block(g.k, g.c)
                      : p == Pass::backward_data        ? L.k_block(g.k)
                      : weights_in_filter_panels(L, g) ? L.k_block(g.k)
                                                        : L.n_block(g.n);
  const int64_t b = std::clamp<int64_t>(panels, 1, std::max<int64_t>(1, block.size()));
  std::vector<Range> out;
  for (int64_t i = 0; i < b; ++i) out.push_back(balanced_block(block.size(), b, i).shifted(block.begin));
  return out;
}

Range filter_panel_flat(const Box4& ker_block, Range filters) {
  const int64_t per_filter = ker_block.volume() / std::max<int64_t>(1, ker_block.extent(0));
  const int64_t first = ker_block.r[0].begin;
  return {(filters.begin - first) * per_filter, (filters.end - first) * per_filter};
}

std::vector<int64_t> filter_panel_counts(const std::vector<Slice>& ker_slices, Range panel) {
  std::vector<int64_t> counts;
  for (const Slice& s : ker_slices) counts.push_back(s.flat.intersect(panel).size());
  return counts;
}

PassVolume streamed_pass_volume(const LayerLayout& L, GridCoord g, Pass p, int64_t panels, int64_t ranks_per_node) {
  const GridDims& d = L.dims();
  const FibreSlices slices(L, g);
  const Box4 ker_box = L.ker_block(g), in_block = L.in_block(g), out_block = L.out_block(g);
  const int64_t me_nhw = d.nhw_index(g);
  const ReadPixels* read = &L.read();
  const FibreMembers in_fibre(slices.in, d, g, Fibre::k, g.k, ranks_per_node),
      out_fibre(slices.out, d, g, Fibre::c, g.c, ranks_per_node),
      ker_fibre(slices.ker, d, g, Fibre::nhw, me_nhw, ranks_per_node);
  PassVolume v;
  // A non-blocking all-gather of the parts in `part` of every member's slice, linear.
  const auto gather = [&](const FibreMembers& f, const ReadPixels* r, const Box4& part) {
    int64_t words = 0, near_words = 0;
    for (size_t j = 0; j < f.slices.size(); ++j) {
      if (static_cast<int64_t>(j) == f.me) continue;
      const int64_t w = count_part(f.slices[j], r, part);
      words += w;
      near_words += f.near[j] ? w : 0;
    }
    const int64_t rounds = nonblocking_rounds(static_cast<int64_t>(f.slices.size()));
    v.all_gather += words;
    v.messages += f.slices.size() > 1 ? 1 : 0;
    v.latency_steps += rounds;
    charge_linear(v, rounds, near_words, f.all_near);
  };
  // The final reduce-scatter, blocking (the algorithm Open MPI picks for its size).
  const auto reduce = [&](Fibre f, int64_t own_words, const std::vector<int64_t>& counts) {
    add_reduce_scatter(v, d, g, f, ranks_per_node, own_words, std::accumulate(counts.begin(), counts.end(), int64_t{0}));
  };
  // A filter panel's reduce-scatter, non-blocking: every other member sends this rank its part
  // of the panel straight (SMPI's MPI_Ireduce_scatter), one round.
  const auto reduce_panel = [&](Range filters) {
    const int64_t own = slices.ker[me_nhw].flat.intersect(filter_panel_flat(ker_box, filters)).size();
    const int64_t q = static_cast<int64_t>(ker_fibre.slices.size());
    int64_t near = 0;
    for (int64_t j = 0; j < q; ++j) near += j != me_nhw && ker_fibre.near[j] ? own : 0;
    const int64_t rounds = nonblocking_rounds(q);
    v.reduce_scatter += (q - 1) * own;
    v.messages += q > 1 ? 1 : 0;
    v.latency_steps += rounds;
    charge_linear(v, rounds, near, ker_fibre.all_near);
  };
  const bool filter_panels = p == Pass::backward_weights && weights_in_filter_panels(L, g);
  const std::vector<HaloPiece> recv = L.halo_recv(g), send = L.halo_send(g);
  const Range all{0, INT64_MAX};
  for (const Range& P : stream_panels(L, g, p, panels)) {
    if (filter_panels) {  // In is read in place: nothing of it moves
      gather(out_fibre, nullptr, out_block.clipped(1, P));
      reduce_panel(P);
      continue;
    }
    switch (p) {
      case Pass::forward:
        gather(in_fibre, read, in_block.clipped(1, P));
        gather(ker_fibre, nullptr, ker_box.clipped(1, P));
        halo(L, g, ranks_per_node, recv, all, P, v);
        break;
      case Pass::backward_data:
        gather(out_fibre, nullptr, out_block.clipped(1, P));
        gather(ker_fibre, nullptr, ker_box.clipped(0, P));
        break;
      case Pass::backward_weights:
        gather(in_fibre, read, in_block.clipped(0, P));
        gather(out_fibre, nullptr, out_block.clipped(0, P));
        halo(L, g, ranks_per_node, recv, P, all, v);
        break;
    }
  }
  switch (p) {
    case Pass::forward: reduce(Fibre::c, L.out_slice(g).size(), slices.out_size); break;
    case Pass::backward_data:
      if (!L.input_in_place(g)) {
        halo(L, g, ranks_per_node, send, all, all, v);  // the reverse halo receives what the forward one sent
        reduce(Fibre::k, L.read_count(L.in_slice(g)), slices.in_read);
      }
      break;
    case Pass::backward_weights:
      if (!filter_panels) reduce(Fibre::nhw, L.ker_slice(g).size(), slices.ker_size);
      break;
  }
  return v;
}

}  // namespace convgrid
