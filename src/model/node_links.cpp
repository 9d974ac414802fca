// The node level of the cost model: which links a fibre's collectives use (node_links.hpp).
#include "model/node_links.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>

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

namespace {

// World rank of member i of a fibre made of `r`'s runs.
int64_t member_rank(const Runs& r, int64_t i) { return r.first + (i / r.length) * r.stride + i % r.length; }

// A period of the fibre's layout on the nodes, in members: members i and i + period lie at the
// same place in their nodes (ranks a multiple of the node size apart), so whether the pair
// (i, i + d) shares a node repeats with it. Runs of `length` members `stride` ranks apart: a
// multiple of the length whose runs move by whole nodes.
int64_t node_period(const Runs& r, int64_t ranks_per_node) {
  return r.length * (ranks_per_node / std::gcd(r.stride, ranks_per_node));
}

// Whether members 2i and 2i + 1 share a node for every i < pairs (the fold's pairs, the neighbour
// exchange's pair partners). One period decides: i steps that move 2i by a multiple of
// node_period.
bool even_pairs_inside_nodes(const Runs& r, int64_t pairs, int64_t ranks_per_node) {
  const int64_t period = node_period(r, ranks_per_node);
  for (int64_t i = 0; i < std::min(pairs, period / std::gcd(period, int64_t{2})); ++i) {
    if (!same_node(member_rank(r, 2 * i), member_rank(r, 2 * i + 1), ranks_per_node)) return false;
  }
  return true;
}

// Whether every pair of an exchange round shares a node: virtual ranks v and v ^ mask (mask > 0),
// or, for mask 0, the fold's pairs of members 2i and 2i + 1, i < rem.
//
// Virtual rank v stands for member v + rem when v >= rem and, after the fold, for member 2v + 1
// when v < rem (Open MPI's numbering for q = pof2 + rem). One period of each stretch decides:
// members i and i + node_period lie the same way on their nodes, so the pairs of a stretch repeat
// with the v step that moves their members by a multiple of it (made a multiple of 2 mask, the
// period of which v have the mask's bit clear). The pairs across the two stretches
// (v < rem <= v + mask) are at most mask, and a round of mask >= ranks_per_node usually ends at
// its first pair past the fold: members mask apart are at least mask ranks apart.
bool round_inside_nodes_by_pairs(const Runs& r, int64_t pof2, int64_t rem, int64_t mask, int64_t ranks_per_node) {
  const int64_t period = node_period(r, ranks_per_node);
  const int64_t half_period = period / std::gcd(period, int64_t{2});  // v steps that move 2v + 1 by a period
  const auto pair_near = [&](int64_t a, int64_t b) {
    return same_node(member_rank(r, a), member_rank(r, b), ranks_per_node);
  };
  if (mask == 0) return even_pairs_inside_nodes(r, rem, ranks_per_node);
  const int64_t unfolded_end = std::min(pof2, rem + std::lcm(period, 2 * mask));
  for (int64_t v = rem; v < unfolded_end; ++v) {
    if ((v & mask) == 0 && !pair_near(v + rem, (v | mask) + rem)) return false;
  }
  const int64_t folded_end = std::min(rem, std::lcm(half_period, 2 * mask));
  for (int64_t v = 0; v < folded_end; ++v) {
    if ((v & mask) == 0 && (v | mask) < rem && !pair_near(2 * v + 1, 2 * (v | mask) + 1)) return false;
  }
  for (int64_t v = std::max<int64_t>(0, rem - mask); v < rem; ++v) {
    if ((v & mask) == 0 && (v | mask) >= rem && !pair_near(2 * v + 1, (v | mask) + rem)) return false;
  }
  return true;
}

// round_inside_nodes_by_pairs, remembered: the planner asks it of the same few fibres for many
// ranks and grids, and a fibre's answer depends only on its shape and on where its first rank
// falls in a node. A pure function's memo, per thread (SMPI's ranks share a thread: harmless).
bool round_inside_nodes(const Runs& r, int64_t pof2, int64_t rem, int64_t mask, int64_t ranks_per_node) {
  using Key = std::array<int64_t, 8>;
  thread_local std::map<Key, bool> memo;
  const Key key{r.first % ranks_per_node, r.length, r.count, r.stride, pof2, rem, mask, ranks_per_node};
  if (const auto it = memo.find(key); it != memo.end()) return it->second;
  if (memo.size() >= 65536) memo.clear();
  const bool inside = round_inside_nodes_by_pairs(r, pof2, rem, mask, ranks_per_node);
  memo.emplace(key, inside);
  return inside;
}

// The butterfly's and recursive halving's node part. Each round is a send-receive between pairs
// (lockstep, as the all-gathers): a round is the node's when all its pairs share a node. Round
// j of the log2(pof2) halves the vector (j = 0 moves a half, j = 1 a quarter, ...): over the
// partner at distance 2^j in the butterfly, pof2 / 2^(j+1) in recursive halving. The counted
// words are split between the rounds in those proportions. The fold sends the whole vector
// between members 2i and 2i + 1 (the caller counts it as surplus words, time only; here the part
// inside a node), and the rounds after the exchanges
// (the mirror exchange, the return to the folded members) are the node's when the fibre is.
void charge_pairwise(PassVolume& v, const Runs& r, int64_t q, bool butterfly, int64_t ranks_per_node,
                     bool in_one_node, int64_t words, int64_t total_words, int64_t rounds) {
  const int64_t lg = floor_log2(q), pof2 = int64_t{1} << lg, rem = q - pof2;
  double node_share = 0, exchange_share = 0;
  int64_t node_rounds = 0;
  for (int64_t j = 0; j < lg; ++j) {
    const double share = 1.0 / static_cast<double>(int64_t{2} << j);
    const int64_t mask = butterfly ? int64_t{1} << j : pof2 >> (j + 1);
    exchange_share += share;
    if (in_one_node || round_inside_nodes(r, pof2, rem, mask, ranks_per_node)) {
      node_share += share;
      ++node_rounds;
    }
  }
  v.node_words += static_cast<int64_t>(static_cast<double>(words) * node_share / exchange_share);
  v.node_steps += static_cast<double>(node_rounds + (in_one_node ? rounds - lg : 0));
  if (rem > 0 && (in_one_node || round_inside_nodes(r, pof2, rem, 0, ranks_per_node))) {
    v.surplus_node_words += total_words;
  }
}

// The neighbour exchange's node part (q even, the fibre over more than one node): its q/2
// rounds alternate between the partners 2i <-> 2i + 1 (round 0, one block, and the even rounds
// after it, two blocks each) and 2i + 1 <-> 2i + 2 mod q (the odd rounds, two blocks each). The
// second set includes members q - 1 and 0, which lie on different nodes when the fibre spans
// nodes (its members increase), so those rounds are the network's. The q - 1 blocks the rank
// receives are taken as equal shares of `words`.
void charge_neighbour_exchange(PassVolume& v, const Runs& r, int64_t q, int64_t ranks_per_node, int64_t words) {
  if (!even_pairs_inside_nodes(r, q / 2, ranks_per_node)) return;
  const int64_t later = q / 2 - 1;  // the rounds after the first
  v.node_words += words * (1 + 2 * (later / 2)) / (q - 1);
  v.node_steps += static_cast<double>(1 + later / 2);
}

}  // namespace

void add_all_gather(PassVolume& v, const GridDims& d, GridCoord g, Fibre f, int64_t ranks_per_node, int64_t words,
                    int64_t total_words, int64_t in_fibre) {
  const int64_t q = fibre_size(d, f, in_fibre);
  if (q <= 1) return;
  const int64_t total_bytes = total_words * static_cast<int64_t>(sizeof(float));
  const int64_t rounds = all_gather_rounds(q, total_bytes);
  v.all_gather += words;
  v.messages += 1;
  v.latency_steps += rounds;
  if (ranks_per_node <= 1) return;
  const bool in_one_node = fibre_in_one_node(d, g, f, ranks_per_node, in_fibre);
  if (!in_one_node && all_gather_algorithm(q, total_bytes) == AllGather::neighbour) {
    charge_neighbour_exchange(v, fibre_runs(d, g, f, in_fibre), q, ranks_per_node, words);
    return;
  }
  charge_lockstep(v, in_one_node, rounds, words);
}

void add_reduce_scatter(PassVolume& v, const GridDims& d, GridCoord g, Fibre f, int64_t ranks_per_node,
                        int64_t own_slice_words, int64_t total_words, int64_t in_fibre) {
  const int64_t q = fibre_size(d, f, in_fibre);
  if (q <= 1) return;
  const int64_t total_bytes = total_words * static_cast<int64_t>(sizeof(float));
  const ReduceScatter algorithm = reduce_scatter_algorithm(q, total_bytes);
  const int64_t words = (q - 1) * own_slice_words, rounds = reduce_scatter_rounds(q, total_bytes);
  v.reduce_scatter += words;
  v.messages += 1;
  v.latency_steps += rounds;
  const bool pairwise = algorithm == ReduceScatter::butterfly || algorithm == ReduceScatter::recursive_halving;
  if (pairwise && q != (int64_t{1} << floor_log2(q))) v.surplus_words += total_words;  // the fold
  if (ranks_per_node <= 1) return;
  const bool in_one_node = fibre_in_one_node(d, g, f, ranks_per_node, in_fibre);
  switch (algorithm) {
    case ReduceScatter::butterfly:
    case ReduceScatter::recursive_halving:
      charge_pairwise(v, fibre_runs(d, g, f, in_fibre), q, algorithm == ReduceScatter::butterfly, ranks_per_node,
                      in_one_node, words, total_words, rounds);
      return;
    case ReduceScatter::non_overlapping:  // a tree and a scatter: lockstep
      charge_lockstep(v, in_one_node, rounds, words);
      return;
    case ReduceScatter::ring:
      break;
  }
  if (own_slice_words * static_cast<int64_t>(sizeof(float)) >= kEagerBytes) {
    charge_lockstep(v, in_one_node, rounds, words);
    return;
  }
  const int64_t node_edges = q - ring_network_edges(d, g, f, ranks_per_node, in_fibre);
  v.node_steps += static_cast<double>(rounds * node_edges) / static_cast<double>(q);
  v.node_words += words * node_edges / q;
}

void HaloExchange::add(PassVolume& v, int64_t words, bool near) {
  if (words == 0) return;
  v.point_to_point += words;
  v.messages += 1;
  ++messages_;
  node_words_ += near ? words : 0;
  all_near_ = all_near_ && near;
}

void HaloExchange::finish(PassVolume& v) const {
  const int64_t rounds = messages_ > 0 ? 1 : 0;
  v.latency_steps += rounds;
  charge_linear(v, rounds, node_words_, all_near_);
}

void charge_linear(PassVolume& v, int64_t rounds, int64_t node_words, bool all_peers_on_node) {
  v.node_words += node_words;
  if (all_peers_on_node) v.node_steps += static_cast<double>(rounds);
}

}  // namespace convgrid
