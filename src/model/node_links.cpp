// The node level of the cost model: which links a fibre's collectives use (node_links.hpp).
#include "model/node_links.hpp"

#include "model/collective_rounds.hpp"

namespace convgrid {

namespace {
int64_t k_members(const GridDims& d, int64_t in_fibre) { return in_fibre > 0 ? in_fibre : d.Pk; }
}  // namespace

int64_t fibre_size(const GridDims& d, Fibre f, int64_t in_fibre) {
  return f == Fibre::k ? k_members(d, in_fibre) : f == Fibre::c ? d.Pc : d.nhw_size();
}

std::vector<int64_t> fibre_ranks(const GridDims& d, GridCoord g, Fibre f, int64_t in_fibre) {
  std::vector<int64_t> ranks;
  switch (f) {
    case Fibre::k: {
      const int64_t m = k_members(d, in_fibre), first = g.k - g.k % m;
      for (g.k = first; g.k < first + m; ++g.k) ranks.push_back(d.rank_of(g));
      break;
    }
    case Fibre::c:
      for (g.c = 0; g.c < d.Pc; ++g.c) ranks.push_back(d.rank_of(g));
      break;
    case Fibre::nhw:  // nhw_index order: (pn*Ph + ph)*Pw + pw
      for (g.n = 0; g.n < d.Pn; ++g.n)
        for (g.h = 0; g.h < d.Ph; ++g.h)
          for (g.w = 0; g.w < d.Pw; ++g.w) ranks.push_back(d.rank_of(g));
      break;
  }
  return ranks;
}

namespace {

// A fibre's members in communicator order, increasing: `count` runs of `length` consecutive ranks,
// run i starting at first + i * stride (k- and c-fibres: runs of one rank; the nhw-fibre: one run
// of Ph*Pw ranks per pn). O(1) to build, so that the planner's grids of thousands of ranks cost
// no enumeration.
struct Runs {
  int64_t first, length, count, stride;
};

Runs fibre_runs(const GridDims& d, GridCoord g, Fibre f, int64_t in_fibre) {
  switch (f) {
    case Fibre::k: {
      const int64_t m = k_members(d, in_fibre);
      g.k -= g.k % m;
      return {d.rank_of(g), 1, m, d.Pc * d.Ph * d.Pw};
    }
    case Fibre::c:
      g.c = 0;
      return {d.rank_of(g), 1, d.Pc, d.Ph * d.Pw};
    case Fibre::nhw:
      break;
  }
  g.n = g.h = g.w = 0;
  return {d.rank_of(g), d.Ph * d.Pw, d.Pn, d.Pk * d.Pc * d.Ph * d.Pw};
}

}  // namespace

bool fibre_in_one_node(const GridDims& d, GridCoord g, Fibre f, int64_t ranks_per_node, int64_t in_fibre) {
  if (ranks_per_node < fibre_size(d, f, in_fibre)) return false;  // more members than a node has ranks
  const Runs r = fibre_runs(d, g, f, in_fibre);
  const int64_t last = r.first + (r.count - 1) * r.stride + r.length - 1;
  return r.first / ranks_per_node == last / ranks_per_node;
}

int64_t ring_network_edges(const GridDims& d, GridCoord g, Fibre f, int64_t ranks_per_node, int64_t in_fibre) {
  const int64_t q = fibre_size(d, f, in_fibre);
  if (q <= 1) return 0;
  if (ranks_per_node <= 0) return q;
  // The members increase, so the ring leaves each node it visits once, and the closing edge
  // crosses back unless there is only one: as many crossings as nodes visited, when over one.
  const Runs r = fibre_runs(d, g, f, in_fibre);
  int64_t nodes = 0, last_node = -1;
  for (int64_t i = 0; i < r.count; ++i) {
    const int64_t a = r.first + i * r.stride;
    const int64_t from = a / ranks_per_node, to = (a + r.length - 1) / ranks_per_node;
    nodes += to - from + 1 - (from == last_node ? 1 : 0);
    last_node = to;
  }
  return nodes > 1 ? nodes : 0;
}

int64_t spatial_peer_rank(const GridDims& d, GridCoord g, int64_t peer) {
  g.h = peer / d.Pw;
  g.w = peer % d.Pw;
  return d.rank_of(g);
}

void charge_lockstep(PassVolume& v, bool in_one_node, int64_t rounds, int64_t words) {
  if (!in_one_node) return;
  v.node_words += words;
  v.node_steps += static_cast<double>(rounds);
}

void add_reduce_scatter(PassVolume& v, const GridDims& d, GridCoord g, Fibre f, int64_t ranks_per_node,
                        int64_t own_slice_words, int64_t in_fibre) {
  const int64_t q = fibre_size(d, f, in_fibre);
  if (q <= 1) return;
  const int64_t words = (q - 1) * own_slice_words, rounds = reduce_scatter_rounds(q);
  v.reduce_scatter += words;
  v.messages += 1;
  v.latency_steps += rounds;
  if (ranks_per_node <= 1) return;
  if (own_slice_words * static_cast<int64_t>(sizeof(float)) >= kEagerBytes) {
    charge_lockstep(v, fibre_in_one_node(d, g, f, ranks_per_node, in_fibre), rounds, words);
    return;
  }
  const int64_t node_edges = q - ring_network_edges(d, g, f, ranks_per_node, in_fibre);
  v.node_steps += static_cast<double>(rounds * node_edges) / static_cast<double>(q);
  v.node_words += words * node_edges / q;
}

void charge_linear(PassVolume& v, int64_t rounds, int64_t node_words, bool all_peers_on_node) {
  v.node_words += node_words;
  if (all_peers_on_node) v.node_steps += static_cast<double>(rounds);
}

}  // namespace convgrid
