// The cost model's node level (src/model/node_links): which fibres stay inside a node, how each
// kind of collective splits its words and rounds between the node's links and the network, and
// the invariants that tie the split to the totals on every grid.
#include "model/node_links.hpp"

#include <gtest/gtest.h>

#include "model/collective_rounds.hpp"
#include "model/pass_cost.hpp"
#include "model/streamed_volume.hpp"

namespace convgrid {
namespace {

TEST(NodeLinks, FibresInsideANode) {
  // 32 ranks, grid 2,2,2,2,2: the w-neighbours are adjacent ranks, the k-fibre strides 8.
  const GridDims d{2, 2, 2, 2, 2};
  const GridCoord g{1, 0, 1, 0, 1};
  EXPECT_TRUE(fibre_in_one_node(d, g, Fibre::c, 8));     // stride 4: ranks 17 and 21
  EXPECT_FALSE(fibre_in_one_node(d, g, Fibre::k, 8));    // stride 8: ranks 21 and 29
  EXPECT_TRUE(fibre_in_one_node(d, g, Fibre::k, 16));
  EXPECT_FALSE(fibre_in_one_node(d, g, Fibre::nhw, 16));  // 8 members over both halves
  EXPECT_TRUE(fibre_in_one_node(d, g, Fibre::nhw, 32));
  EXPECT_FALSE(fibre_in_one_node(d, g, Fibre::c, 0));     // no node level
  EXPECT_FALSE(same_node(3, 3, 0));
  EXPECT_TRUE(same_node(8, 15, 8));
  EXPECT_FALSE(same_node(7, 8, 8));
}

TEST(NodeLinks, ClosedFormsAgreeWithTheMembers) {
  // fibre_in_one_node and ring_network_edges work from the fibre's runs of consecutive ranks;
  // against the members themselves, on every grid of 24 and 32 ranks, every rank and fibre, and
  // node sizes that divide the grid's extents and that do not.
  int64_t checked = 0;
  for (int64_t P : {24, 32}) {
    for (const GridDims& d : all_grids(P)) {
      for (int64_t r = 0; r < P; ++r) {
        for (Fibre f : {Fibre::k, Fibre::c, Fibre::nhw}) {
          const std::vector<int64_t> members = fibre_ranks(d, d.coord_of(r), f);
          for (int64_t node : {1, 2, 3, 4, 5, 8, 16, 32}) {
            bool one = true;
            int64_t crossing = 0;
            for (size_t i = 0; i < members.size(); ++i) {
              one = one && same_node(members[i], r, node);
              crossing += same_node(members[i], members[(i + 1) % members.size()], node) ? 0 : 1;
            }
            if (members.size() == 1) crossing = 0;
            ASSERT_EQ(fibre_in_one_node(d, d.coord_of(r), f, node), one) << d.to_string() << " rank " << r;
            ASSERT_EQ(ring_network_edges(d, d.coord_of(r), f, node), crossing) << d.to_string() << " rank " << r;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 10000);
}

// The pairwise reduce-scatters' and the neighbour exchange's node charges, which check one period
// of a fibre's layout on the nodes (node_links.cpp), against the rule applied to every pair of
// the fibre's members: grids whose fibres are and are not powers of two (the fold), node sizes
// that divide their strides and that do not.
struct NodePart {
  double steps = 0;
  int64_t words = 0, surplus_words = 0;
};

NodePart pairwise_by_every_pair(const std::vector<int64_t>& m, bool butterfly, int64_t node, int64_t words,
                                int64_t total_words, int64_t rounds) {
  const int64_t q = static_cast<int64_t>(m.size()), lg = floor_log2(q), pof2 = int64_t{1} << lg, rem = q - pof2;
  const bool one_node = q <= node && m.front() / node == m.back() / node;
  const auto member = [&](int64_t v) { return m[v < rem ? 2 * v + 1 : v + rem]; };
  double node_share = 0, all_shares = 0;
  int64_t node_rounds = 0;
  for (int64_t j = 0; j < lg; ++j) {
    const double share = 1.0 / static_cast<double>(int64_t{2} << j);
    const int64_t mask = butterfly ? int64_t{1} << j : pof2 >> (j + 1);
    bool inside = true;
    for (int64_t v = 0; v < pof2; ++v) {
      if ((v & mask) == 0) inside = inside && same_node(member(v), member(v | mask), node);
    }
    all_shares += share;
    if (one_node || inside) {
      node_share += share;
      ++node_rounds;
    }
  }
  bool fold_inside = true;
  for (int64_t i = 0; i < rem; ++i) fold_inside = fold_inside && same_node(m[2 * i], m[2 * i + 1], node);
  return {static_cast<double>(node_rounds + (one_node ? rounds - lg : 0)),
          static_cast<int64_t>(static_cast<double>(words) * node_share / all_shares),
          rem > 0 && (one_node || fold_inside) ? total_words : 0};
}

TEST(NodeLinks, PeriodicChecksAgreeWithEveryPair) {
  int64_t pairwise = 0, neighbour = 0;
  for (int64_t P : {12, 20, 24, 40, 48, 96, 160}) {
    for (const GridDims& d : all_grids(P)) {
      for (int64_t r : {int64_t{0}, int64_t{1}, P / 2 + 1, P - 1}) {
        const GridCoord g = d.coord_of(r);
        for (Fibre f : {Fibre::k, Fibre::c, Fibre::nhw}) {
          const std::vector<int64_t> m = fibre_ranks(d, g, f);
          const int64_t q = static_cast<int64_t>(m.size());
          if (q < 4) continue;
          for (int64_t node : {2, 3, 4, 6, 8, 12}) {
            for (int64_t total : {q * 25, q * 500, q * 5000}) {
              const int64_t bytes = total * 4;
              const ReduceScatter a = reduce_scatter_algorithm(q, bytes);
              if (a == ReduceScatter::butterfly || a == ReduceScatter::recursive_halving) {
                PassVolume v;
                add_reduce_scatter(v, d, g, f, node, total / q, total);
                const NodePart want = pairwise_by_every_pair(m, a == ReduceScatter::butterfly, node, (q - 1) * (total / q),
                                                             total, reduce_scatter_rounds(q, bytes));
                SCOPED_TRACE(d.to_string() + " rank " + std::to_string(r) + " node " + std::to_string(node) +
                             " total " + std::to_string(total));
                ASSERT_DOUBLE_EQ(v.node_steps, want.steps);
                ASSERT_EQ(v.node_words, want.words);
                ASSERT_EQ(v.surplus_node_words, want.surplus_words);
                ++pairwise;
              }
              const bool one_node = q <= node && m.front() / node == m.back() / node;
              if (all_gather_algorithm(q, bytes) == AllGather::neighbour && !one_node) {
                PassVolume v;
                const int64_t words = (q - 1) * (total / q);
                add_all_gather(v, d, g, f, node, words, total);
                bool pairs_inside = true;
                for (int64_t i = 0; i < q / 2; ++i) pairs_inside = pairs_inside && same_node(m[2 * i], m[2 * i + 1], node);
                const int64_t later = q / 2 - 1;
                EXPECT_EQ(v.node_words, pairs_inside ? words * (1 + 2 * (later / 2)) / (q - 1) : 0);
                EXPECT_DOUBLE_EQ(v.node_steps, pairs_inside ? static_cast<double>(1 + later / 2) : 0.0);
                ++neighbour;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(pairwise, 5000);
  EXPECT_GT(neighbour, 500);
}

TEST(NodeLinks, FibreMembersInCommunicatorOrder) {
  const GridDims d{2, 2, 2, 2, 2};
  const GridCoord g{1, 0, 1, 0, 1};
  EXPECT_EQ(fibre_ranks(d, g, Fibre::k), (std::vector<int64_t>{d.rank_of({1, 0, 1, 0, 1}), d.rank_of({1, 1, 1, 0, 1})}));
  EXPECT_EQ(fibre_ranks(d, g, Fibre::c), (std::vector<int64_t>{d.rank_of({1, 0, 0, 0, 1}), d.rank_of({1, 0, 1, 0, 1})}));
  const std::vector<int64_t> nhw = fibre_ranks(d, g, Fibre::nhw);
  ASSERT_EQ(static_cast<int64_t>(nhw.size()), d.nhw_size());
  for (int64_t i = 0; i < d.nhw_size(); ++i) {
    const GridCoord m = d.coord_of(nhw[i]);
    EXPECT_EQ(d.nhw_index(m), i);
    EXPECT_EQ(m.k, g.k);
    EXPECT_EQ(m.c, g.c);
  }
  EXPECT_EQ(spatial_peer_rank(d, g, 3), d.rank_of({1, 0, 1, 1, 1}));
}

TEST(NodeLinks, AnAllGatherOverTwoNodesGoesAtTheNetworksPace) {
  // Pk = 4 (ranks 0..3): forward gathers In (2x8x16x16, 4 KiB a rank) over the k-fibre with the
  // ring, in lockstep rounds.
  const LayerLayout L(ConvShape::parse("N=2,C=8,H=16,W=16,K=8,R=1,S=1"), GridDims{1, 4, 1, 1, 1});
  ASSERT_EQ(all_gather_algorithm(4, 4 * 4096), AllGather::ring);
  const PassVolume whole = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 4);
  EXPECT_EQ(whole.node_words, whole.words());
  EXPECT_DOUBLE_EQ(whole.node_steps, static_cast<double>(whole.latency_steps));
  const PassVolume split = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 2);
  EXPECT_EQ(split.node_words, 0);
  EXPECT_DOUBLE_EQ(split.node_steps, 0);
}

TEST(NodeLinks, TheNeighbourExchangesRoundsWithItsPairPartnerAreTheNodes) {
  // Pk = 4: In of 2x8x6x6 (576 bytes a rank) goes by neighbour exchange, 2 rounds: round 0 swaps
  // one block with the pair partner (0 <-> 1, 2 <-> 3), round 1 two blocks with the other
  // neighbour (1 <-> 2, 3 <-> 0). On nodes of 2 the first is the node's: a third of the words.
  const LayerLayout L(ConvShape::parse("N=2,C=8,H=6,W=6,K=8,R=1,S=1"), GridDims{1, 4, 1, 1, 1});
  ASSERT_EQ(all_gather_algorithm(4, 4 * 576), AllGather::neighbour);
  const PassVolume split = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 2);
  EXPECT_EQ(split.all_gather, 3 * 144);
  EXPECT_EQ(split.latency_steps, 2);
  EXPECT_DOUBLE_EQ(split.node_steps, 1);
  EXPECT_EQ(split.node_words, 144);
  const PassVolume whole = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 4);
  EXPECT_EQ(whole.node_words, whole.words());
  EXPECT_DOUBLE_EQ(whole.node_steps, 2);
  // On grid 1x4x1x1x2 the k-fibre strides 2 (ranks 0, 2, 4, 6): no pair shares a node of 2
  // (Ker held, so that only In moves).
  const LayerLayout far(ConvShape::parse("N=2,C=8,H=6,W=6,K=8,R=1,S=1"), GridDims{1, 4, 1, 1, 2});
  Held ker_held;
  ker_held.ker_block = true;
  const PassVolume apart = grid_pass_volume(far, GridCoord{}, Pass::forward, ker_held, 2);
  EXPECT_EQ(apart.latency_steps, 2);
  EXPECT_EQ(apart.node_words, 0);
}

TEST(NodeLinks, ALongNeighbourExchangeAlternatesBetweenNodeAndNetwork) {
  // Ker (1024 x 128 x 3 x 3 words, 4.5 MiB: 4608 bytes a rank) gathered over an nhw-fibre of
  // 1024 consecutive ranks, nodes of 8: 512 rounds, 256 with the pair partner (1 + 2 x 255 of
  // the 1023 blocks) on the node, 256 with the other neighbour (2 x 256 blocks), where one pair
  // in four crosses nodes: those rounds are the network's.
  const LayerLayout L(ConvShape::parse("N=1024,C=128,H=8,W=8,K=1024,R=3,S=3,pad=1"), GridDims{1024, 1, 1, 1, 1});
  ASSERT_EQ(all_gather_algorithm(1024, 1024 * 128 * 9 * 4), AllGather::neighbour);
  const PassVolume v = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 8);
  EXPECT_EQ(v.all_gather, 1023 * 128 * 9);
  EXPECT_EQ(v.latency_steps, 512);
  EXPECT_DOUBLE_EQ(v.node_steps, 256);
  EXPECT_EQ(v.node_words, 1023 * 128 * 9 * 511 / 1023);
}

TEST(NodeLinks, ASmallReduceScatterRingTakesEachEdgesShare) {
  // Pc = 3: forward reduce-scatters Out (2x6x6x6, 1728 bytes) over ranks 0..2: the ring, 2
  // rounds, rank 0's slice 2 of the 6 channels (144 words), eager, so the ring is a pipeline.
  const LayerLayout L(ConvShape::parse("N=2,C=3,H=6,W=6,K=6,R=1,S=1"), GridDims{1, 1, 3, 1, 1});
  const PassVolume whole = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 3);
  EXPECT_EQ(whole.latency_steps, 2);
  EXPECT_DOUBLE_EQ(whole.node_steps, 2);
  EXPECT_EQ(whole.node_words, whole.words());
  // Nodes of 2: edge 0->1 stays inside a node, 1->2 and 2->0 cross; a third of each.
  const PassVolume split = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 2);
  EXPECT_EQ(split.words(), 2 * 144);
  EXPECT_DOUBLE_EQ(split.node_steps, 2.0 / 3.0);
  EXPECT_EQ(split.node_words, 2 * 144 / 3);
}

TEST(NodeLinks, TheButterflysNearRoundsCarryMostWordsInsideANode) {
  // Pc = 64 (ranks 0..63), Out of 64x32x32 words (256 KiB): the butterfly, 6 exchanges and the
  // mirror exchange. On nodes of 8 the exchanges with partners 1, 2 and 4 away stay inside a
  // node and carry 1/2 + 1/4 + 1/8 of the 63/64 of the vector that the exchanges move.
  const LayerLayout L(ConvShape::parse("N=1,C=64,H=32,W=32,K=64,R=1,S=1"), GridDims{1, 1, 64, 1, 1});
  const PassVolume v = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 8);
  EXPECT_EQ(v.reduce_scatter, 63 * 1024);
  EXPECT_EQ(v.latency_steps, 7);
  EXPECT_DOUBLE_EQ(v.node_steps, 3);
  EXPECT_EQ(v.node_words, 63 * 1024 * 56 / 63);
  EXPECT_EQ(v.surplus_words, 0);
  const PassVolume one = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 64);
  EXPECT_EQ(one.node_words, one.words());
  EXPECT_DOUBLE_EQ(one.node_steps, 7);
}

TEST(NodeLinks, RecursiveHalvingSendsItsLargestHalfFarthest) {
  // Pc = 16 (ranks 0..15), Out of 16x4x4 words (1 KiB): recursive halving, partners 8, 4, 2, 1
  // away. On nodes of 8 the first exchange (half of the vector) crosses, the other three do not:
  // 1/4 + 1/8 + 1/16 of the 15/16 the exchanges move.
  const LayerLayout L(ConvShape::parse("N=1,C=16,H=4,W=4,K=16,R=1,S=1"), GridDims{1, 1, 16, 1, 1});
  const PassVolume v = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 8);
  EXPECT_EQ(v.reduce_scatter, 15 * 16);
  EXPECT_EQ(v.latency_steps, 4);
  EXPECT_DOUBLE_EQ(v.node_steps, 3);
  EXPECT_EQ(v.node_words, 15 * 16 * 7 / 15);
}

TEST(NodeLinks, AFoldOverAFibreThatIsNotAPowerOfTwoMovesTheWholeVectorForTimeAlone) {
  // Pc = 6, Out of 6x4x4 words: recursive halving over 4 after members 0 and 2 fold into 1 and 3,
  // which receives their whole vector (96 words) beyond the counted ones.
  const LayerLayout L(ConvShape::parse("N=1,C=6,H=4,W=4,K=6,R=1,S=1"), GridDims{1, 1, 6, 1, 1});
  const PassVolume apart = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 0);
  EXPECT_EQ(apart.reduce_scatter, 5 * 16);
  EXPECT_EQ(apart.latency_steps, 4);
  EXPECT_EQ(apart.surplus_words, 96);
  EXPECT_EQ(apart.surplus_node_words, 0);
  EXPECT_EQ(CommLoad::of(apart).network_words, 5 * 16 + 96);
  const PassVolume pairs = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 2);  // 0,1 and 2,3 share nodes
  EXPECT_EQ(pairs.surplus_node_words, 96);
  EXPECT_EQ(CommLoad::of(pairs).node_words, pairs.node_words + 96);
}

TEST(NodeLinks, ALargeReduceScatterRingGoesInLockstep) {
  // Out of 4x64x16x16 = 65536 words over Pc = 4: blocks of 16384 words, 64 KiB, sent in
  // rendezvous: every round waits for the pairs that cross nodes.
  const LayerLayout L(ConvShape::parse("N=4,C=4,H=16,W=16,K=64,R=1,S=1"), GridDims{1, 1, 4, 1, 1});
  const PassVolume split = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 2);
  EXPECT_EQ(split.reduce_scatter, 3 * 16384);
  EXPECT_DOUBLE_EQ(split.node_steps, 0);
  EXPECT_EQ(split.node_words, 0);
  const PassVolume whole = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 4);
  EXPECT_EQ(whole.node_words, whole.words());
}

TEST(NodeLinks, ANonBlockingGatherSplitsItsWordsByPeer) {
  // The streamed forward pass on Pk = 4 gathers In's slices from the 3 other members of the
  // k-fibre (stride 1: ranks 0..3) at once. On nodes of 2, rank 0's partner on its node sends a
  // third of them; the round is the network's.
  const LayerLayout L(ConvShape::parse("N=2,C=8,H=6,W=6,K=8,R=1,S=1"), GridDims{1, 4, 1, 1, 1});
  const PassVolume all = streamed_pass_volume(L, GridCoord{}, Pass::forward, 1, 0);
  const PassVolume split = streamed_pass_volume(L, GridCoord{}, Pass::forward, 1, 2);
  EXPECT_EQ(all.all_gather, 3 * 2 * 2 * 36);
  EXPECT_EQ(split.node_words, 2 * 2 * 36);
  EXPECT_DOUBLE_EQ(split.node_steps, 0);
  const PassVolume near = streamed_pass_volume(L, GridCoord{}, Pass::forward, 1, 4);
  EXPECT_EQ(near.node_words, near.words());
  EXPECT_DOUBLE_EQ(near.node_steps, static_cast<double>(near.latency_steps));
}

TEST(NodeLinks, AHaloFromANeighbourOnTheSameNodeIsTheNodes) {
  // 3x3 pad 1, Ph = 2: rank 0 receives 30 halo words (one row) from rank 1 and gathers weights
  // from it over the nhw-fibre of 2 (two processes: a tree).
  const LayerLayout L(ConvShape::parse("N=2,C=3,H=8,W=5,K=4,R=3,S=3,pad=1"), GridDims{1, 1, 1, 2, 1});
  const PassVolume v = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 2);
  EXPECT_EQ(v.point_to_point, 30);
  EXPECT_EQ(v.node_words, v.words());
  EXPECT_DOUBLE_EQ(v.node_steps, 2);
  const PassVolume apart = grid_pass_volume(L, GridCoord{}, Pass::forward, Held{}, 1);
  EXPECT_EQ(apart.node_words, 0);
  EXPECT_DOUBLE_EQ(apart.node_steps, 0);
}

TEST(NodeLinks, AHaloFromThreeNeighboursIsOneRound) {
  // Ph = Pw = 2: rank 0 receives halo pieces from ranks 1, 2 and 3, posted at once: three
  // messages, one round. On nodes of 2 rank 1 is near and ranks 2 and 3 are not: the round is
  // the network's, rank 1's words the node's.
  const LayerLayout L(ConvShape::parse("N=2,C=3,H=8,W=8,K=4,R=3,S=3,pad=1"), GridDims{1, 1, 1, 2, 2});
  Held ker_held;
  ker_held.ker_block = true;
  const std::vector<HaloPiece> pieces = L.halo_recv(GridCoord{});
  ASSERT_EQ(pieces.size(), 3U);
  const PassVolume v = grid_pass_volume(L, GridCoord{}, Pass::forward, ker_held, 2);
  EXPECT_EQ(v.messages, 3);
  EXPECT_EQ(v.latency_steps, 1);
  EXPECT_DOUBLE_EQ(v.node_steps, 0);
  for (const HaloPiece& p : pieces) {
    if (p.peer == 1) {
      EXPECT_EQ(v.node_words, p.words);
    }
  }
  const PassVolume near = grid_pass_volume(L, GridCoord{}, Pass::forward, ker_held, 4);
  EXPECT_EQ(near.latency_steps, 1);
  EXPECT_DOUBLE_EQ(near.node_steps, 1);
  EXPECT_EQ(near.node_words, near.words());
}

TEST(NodeLinks, OneNodeHoldsEverythingAndNoNodeLevelNothing) {
  // On every grid of 8 ranks, in every pass of both algorithms: a node of all 8 ranks carries
  // every word and round; nodes of one rank (or none) carry nothing; in between, the node's part
  // never exceeds the whole.
  const ConvShape s = ConvShape::parse("N=4,C=6,H=7,W=6,K=4,R=3,S=3,pad=1,stride=2");
  int64_t checked = 0;
  for (const GridDims& d : all_grids(8)) {
    if (!d.fits(s)) continue;
    const LayerLayout L(s, d);
    for (int64_t r = 0; r < d.size(); ++r) {
      for (Pass p : {Pass::forward, Pass::backward_data, Pass::backward_weights}) {
        SCOPED_TRACE(::testing::Message() << d.to_string() << " rank " << r << " pass " << static_cast<int>(p));
        for (int64_t panels : {0, 2}) {
          const auto volume = [&](int64_t node) {
            return panels > 0 ? streamed_pass_volume(L, d.coord_of(r), p, panels, node)
                              : grid_pass_volume(L, d.coord_of(r), p, Held{}, node);
          };
          const PassVolume all = volume(8), none = volume(0), single = volume(1), half = volume(4);
          EXPECT_EQ(all.node_words, all.words());
          EXPECT_DOUBLE_EQ(all.node_steps, static_cast<double>(all.latency_steps));
          EXPECT_EQ(none.node_words, 0);
          EXPECT_DOUBLE_EQ(none.node_steps, 0);
          EXPECT_EQ(single.node_words, 0);
          EXPECT_DOUBLE_EQ(single.node_steps, 0);
          EXPECT_EQ(half.words(), all.words());
          EXPECT_EQ(half.latency_steps, all.latency_steps);
          EXPECT_LE(half.node_words, half.words());
          EXPECT_LE(half.node_steps, static_cast<double>(half.latency_steps));
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

TEST(NodeLinks, PassTimeChargesEachLinkItsOwnAlphaAndBeta) {
  MachineProfile m;
  m.alpha_s = 4e-6;
  m.beta_s_per_byte = 1e-9;
  m.flop_rate = 1e9;
  m.latency_per_step = true;
  m.node = NodeLinks{8, 1e-6, 1e-10};
  // 3 rounds, 1.5 of them at the node (a pipelined ring); 1000 words, 400 over the node.
  const CommLoad load{1, 1.5, 1.5, 600, 400};
  const PassTime t = pass_time_parts(m, load, 0);
  EXPECT_DOUBLE_EQ(t.latency_s, 1.5 * 4e-6 + 1.5 * 1e-6);
  EXPECT_DOUBLE_EQ(t.transfer_s, 4 * (600 * 1e-9 + 400 * 1e-10));
  // Without the node level the same load is all the network's.
  m.node = {};
  EXPECT_DOUBLE_EQ(pass_time_parts(m, load, 0).latency_s, 3 * 4e-6);
  EXPECT_DOUBLE_EQ(pass_time_parts(m, load, 0).transfer_s, 4 * 1000 * 1e-9);
}

}  // namespace
}  // namespace convgrid
