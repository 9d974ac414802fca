// The node level of the cost model: which links a fibre's collectives use (node_links.hpp).
#include "model/node_links.hpp"

namespace convgrid {

int64_t fibre_size(const GridDims& d, Fibre f) {
  return f == Fibre::k ? d.Pk : f == Fibre::c ? d.Pc : d.nhw_size();
}

std::vector<int64_t> fibre_ranks(const GridDims& d, GridCoord g, Fibre f) {
  std::vector<int64_t> ranks;
  switch (f) {
    case Fibre::k:
      for (g.k = 0; g.k < d.Pk; ++g.k) ranks.push_back(d.rank_of(g));
      break;
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

bool fibre_in_one_node(const GridDims& d, GridCoord g, Fibre f, int64_t ranks_per_node) {
  if (ranks_per_node < fibre_size(d, f)) return false;  // more members than a node has ranks
  const int64_t me = d.rank_of(g);
  for (int64_t r : fibre_ranks(d, g, f)) {
    if (!same_node(r, me, ranks_per_node)) return false;
  }
  return true;
}

int64_t ring_network_edges(const GridDims& d, GridCoord g, Fibre f, int64_t ranks_per_node) {
  const std::vector<int64_t> ranks = fibre_ranks(d, g, f);
  int64_t edges = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    edges += same_node(ranks[i], ranks[(i + 1) % ranks.size()], ranks_per_node) ? 0 : 1;
  }
  return edges;
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

void charge_ring(PassVolume& v, const GridDims& d, GridCoord g, Fibre f, int64_t ranks_per_node, int64_t rounds,
                 int64_t words, int64_t block_bytes) {
  const int64_t q = fibre_size(d, f);
  if (q <= 1 || ranks_per_node <= 1) return;
  if (block_bytes >= kEagerBytes) {
    charge_lockstep(v, fibre_in_one_node(d, g, f, ranks_per_node), rounds, words);
    return;
  }
  const int64_t node_edges = q - ring_network_edges(d, g, f, ranks_per_node);
  v.node_steps += static_cast<double>(rounds * node_edges) / static_cast<double>(q);
  v.node_words += words * node_edges / q;
}

void charge_linear(PassVolume& v, int64_t rounds, int64_t node_words, bool all_peers_on_node) {
  v.node_words += node_words;
  if (all_peers_on_node) v.node_steps += static_cast<double>(rounds);
}

}  // namespace convgrid
