// Which links each collective of the cost model runs over when consecutive ranks share a node
// (profile key "node", model/machine_profile.hpp): the model's second level. A PassVolume keeps,
// beside its words and rounds, the part of each that runs over the links inside a node
// (node_words, node_steps); the rest crosses the network. Pure; no MPI.
//
// The rules (checked against the simulated clusters, docs/scale.md):
//   - lockstep: Open MPI's all-gather algorithms (ring, Bruck, gather + broadcast) exchange
//     with a partner every round (send-receive) and post each receive only when the round
//     begins. One slow pair holds back all, so a fibre that spans two nodes pays the network's
//     latency and bandwidth for every round, one inside a node the node's;
//   - pairwise: the butterfly and recursive halving reduce-scatters (model/collective_rounds.hpp)
//     exchange halves of the vector with one partner a round; a round is the node's when every
//     pair of it shares a node, and carries its half, quarter, ... of the words. The neighbour
//     exchange all-gather alternates between two partners: members 2i and 2i + 1 (its first
//     round, one block, and every second round after, two blocks) and members 2i + 1 and
//     2i + 2 (the other rounds, two blocks); each set of rounds is the node's when all its
//     pairs share a node;
//   - pipelined: the reduce-scatter ring posts each round's receive a round ahead, so when its
//     blocks are small enough to be sent eagerly (below kEagerBytes) a rank waits only for the
//     block coming round the ring: the collective takes the sum over the ring's edges (member i
//     to i+1 mod q) of their latency and transfer, a share of its rounds and words per link.
//     Larger blocks are sent in rendezvous, each send waits for its own partner, and the ring is
//     lockstep;
//   - linear: a non-blocking collective, a halo and a redistribution send each peer's words
//     straight to it, over the link between the two ranks; their one round is the node's when
//     every peer is on the rank's node.
// Without a node level (ranks_per_node == 0) every link is the network's.
#pragma once

#include <cstdint>
#include <vector>

#include "model/grid_volume.hpp"

namespace convgrid {

// Whether ranks a and b share a node of `ranks_per_node` consecutive ranks (never when 0).
inline bool same_node(int64_t a, int64_t b, int64_t ranks_per_node) {
  return ranks_per_node > 0 && a / ranks_per_node == b / ranks_per_node;
}

// The fibres of the grid algorithm through rank g (grid/process_grid.hpp): the k-fibre (In's
// slices), the c-fibre (Out's) and the nhw-fibre (Ker's), members in communicator order.
// `in_fibre` (> 0) narrows the k-fibre to its part of that many consecutive pk holding g, a
// grouped layer's input fibre (LayerLayout::in_fibre_size); 0 is the whole k-fibre.
enum class Fibre { k, c, nhw };
int64_t fibre_size(const GridDims& d, Fibre f, int64_t in_fibre = 0);
std::vector<int64_t> fibre_ranks(const GridDims& d, GridCoord g, Fibre f, int64_t in_fibre = 0);
// Whether every member of g's fibre is on g's node.
bool fibre_in_one_node(const GridDims& d, GridCoord g, Fibre f, int64_t ranks_per_node, int64_t in_fibre = 0);
// The edges of g's fibre's ring (member i to member i+1 mod size) that cross the network.
int64_t ring_network_edges(const GridDims& d, GridCoord g, Fibre f, int64_t ranks_per_node, int64_t in_fibre = 0);

// The largest message MPI sends eagerly, without waiting for the receiver: SMPI's default
// (smpi/send-is-detached-thresh), and Open MPI's eager limit over TCP and shared memory.
constexpr int64_t kEagerBytes = 65536;

// The world rank of g's neighbour `peer` (ph*Pw + pw) in its spatial fibre (HaloPiece::peer).
int64_t spatial_peer_rank(const GridDims& d, GridCoord g, int64_t peer);

// Charges the node's part of a collective to `v`, whose words and latency_steps the caller has
// already added `words` and `rounds` to.
void charge_lockstep(PassVolume& v, bool in_one_node, int64_t rounds, int64_t words);
// The blocking all-gather over g's fibre of `total_words` (every member's part), of which the
// rank receives `words`: its words, message and rounds, and their links, for the algorithm
// Open MPI picks (model/collective_rounds.hpp).
void add_all_gather(PassVolume& v, const GridDims& d, GridCoord g, Fibre f, int64_t ranks_per_node, int64_t words,
                    int64_t total_words, int64_t in_fibre = 0);
// The blocking reduce-scatter over g's fibre of a vector of `total_words` (every member's slice),
// the rank's own slice `own_slice_words`: its words, message and rounds, and their links, for
// the algorithm Open MPI picks (model/collective_rounds.hpp).
void add_reduce_scatter(PassVolume& v, const GridDims& d, GridCoord g, Fibre f, int64_t ranks_per_node,
                        int64_t own_slice_words, int64_t total_words, int64_t in_fibre = 0);
// A halo exchange, piece by piece: every neighbour's message is posted at once
// (comm/exchange.hpp), so the exchange takes one round, the node's when every neighbour that
// sends words is on the rank's node. add() counts a piece's words and message (none when it has
// no words); finish() charges the round once every piece is in.
class HaloExchange {
 public:
  void add(PassVolume& v, int64_t words, bool near);
  void finish(PassVolume& v) const;

 private:
  int64_t messages_ = 0, node_words_ = 0;
  bool all_near_ = true;
};
// A linear collective's or a point-to-point message's: `node_words` of its words come from peers
// on the rank's node; its `rounds` (one, or none when nothing moves) are the node's when every
// peer is.
void charge_linear(PassVolume& v, int64_t rounds, int64_t node_words, bool all_peers_on_node);

}  // namespace convgrid
