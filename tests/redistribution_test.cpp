// The redistribution model (src/model/redistribution) checked against brute force: every element
// of the activation is given its old owner (the rank whose Out slice of layer A holds it) and its
// new owner (the rank whose In slice of layer B holds it) by per-element loops over all ranks'
// slices, and each rank's words are the elements it newly owns that another rank held before.
#include "model/redistribution.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "layout/layer_layout.hpp"
#include "throws_input_error.hpp"

namespace convgrid {
namespace {

struct LayerPair {
  const char* name;
  ConvShape a;
  ConvShape b;
};

// Padded 3x3 then padded 3x3; a stride-2 layer first; a 1x1 layer second; a stride-2 layer second.
const LayerPair kPairs[] = {
    {"same_3x3", ConvShape::parse("N=3,C=4,H=9,W=8,K=5,R=3,S=3,pad=1"),
     ConvShape::parse("N=3,C=5,H=9,W=8,K=6,R=3,S=3,pad=1")},
    {"stride2_first", ConvShape::parse("N=3,C=4,H=9,W=8,K=5,R=3,S=3,stride=2,pad=1"),
     ConvShape::parse("N=3,C=5,H=5,W=4,K=4,R=3,S=3,pad=1")},
    {"1x1_second", ConvShape::parse("N=2,C=3,H=7,W=6,K=7,R=3,S=3"),
     ConvShape::parse("N=2,C=7,H=5,W=4,K=3,R=1,S=1")},
    {"stride2_second", ConvShape::parse("N=3,C=2,H=8,W=7,K=4,R=3,S=3,pad=1"),
     ConvShape::parse("N=3,C=4,H=8,W=7,K=5,R=3,S=3,stride=2,pad=1")},
    // A MobileNet block: 1x1 expansion, then depthwise (In split over groups), then grouped 1x1.
    {"depthwise_second", ConvShape::parse("N=2,C=3,H=7,W=6,K=6,R=1,S=1"),
     ConvShape::parse("N=2,C=6,H=7,W=6,K=6,R=3,S=3,pad=1,groups=6")},
    {"grouped_second", ConvShape::parse("N=2,C=6,H=7,W=6,K=6,R=3,S=3,pad=1,groups=6"),
     ConvShape::parse("N=2,C=6,H=7,W=6,K=4,R=1,S=1,groups=2")},
};

const int64_t kRankCounts[] = {1, 2, 3, 4, 6};

// Owner rank of every element of B's input (N x C x H x W, row-major) under `slice_of(rank)`;
// fails the test when an element is held by no rank or by two.
template <class SliceOf>
std::vector<int64_t> owners(const ConvShape& b, int64_t ranks, SliceOf slice_of) {
  const Box4 whole = input_box(b);
  std::vector<int64_t> owner(whole.volume(), -1);
  for (int64_t r = 0; r < ranks; ++r) {
    for_each_run(slice_of(r),
                 [&](int64_t n, int64_t c, int64_t y, int64_t x0, int64_t x1, int64_t) {
                   for (int64_t x = x0; x < x1; ++x) {
                     int64_t& o = owner[whole.offset(n, c, y, x)];
                     EXPECT_EQ(o, -1) << "element held twice";
                     o = r;
                   }
                 });
  }
  for (int64_t o : owner) EXPECT_NE(o, -1) << "element held by no rank";
  return owner;
}

void check_placements(const Placement& from, const Placement& to);

// Checks every rank's words against brute force, the stats against the per-rank words, that
// the words over all ranks are the elements whose owner changes, and the figures with and
// without nodes (check_placements).
void check_pair(const LayerPair& p, const GridDims& da, const GridDims& db) {
  SCOPED_TRACE(::testing::Message()
               << p.name << " from " << da.to_string() << " to " << db.to_string());
  const LayerLayout from(p.a, da);
  const LayerLayout to(p.b, db);
  const int64_t ranks = da.size();
  const std::vector<int64_t> old_owner =
      owners(p.b, ranks, [&](int64_t r) { return from.out_slice(da.coord_of(r)); });
  const std::vector<int64_t> new_owner =
      owners(p.b, ranks, [&](int64_t r) { return to.in_slice(db.coord_of(r)); });
  std::vector<int64_t> brute(ranks, 0);
  int64_t moved = 0;
  for (size_t i = 0; i < old_owner.size(); ++i) {
    if (old_owner[i] == new_owner[i]) continue;
    ++brute[new_owner[i]];
    ++moved;
  }
  int64_t total = 0, largest = 0;
  for (int64_t r = 0; r < ranks; ++r) {
    const int64_t w = redistribution_words(from, to, r);
    EXPECT_EQ(w, brute[r]) << "rank " << r;
    total += w;
    largest = std::max(largest, w);
  }
  EXPECT_EQ(total, moved);
  const RedistributionStats stats = redistribution_stats(from, to);
  EXPECT_EQ(stats.max_words, largest);
  EXPECT_DOUBLE_EQ(stats.mean_words, static_cast<double>(total) / static_cast<double>(ranks));
  EXPECT_EQ(redistribution_messages(ranks, stats), ranks > 1 && moved > 0 ? 1 : 0);
  check_placements(Placement::output_of(from), Placement::input_of(to));
}

TEST(Redistribution, MatchesBruteForceOnAllGridPairs) {
  int64_t checked = 0;
  for (const LayerPair& p : kPairs) {
    for (int64_t ranks : kRankCounts) {
      for (const GridDims& da : all_grids(ranks)) {
        if (!da.fits(p.a)) continue;
        for (const GridDims& db : all_grids(ranks)) {
          if (!db.fits(p.b)) continue;
          check_pair(p, da, db);
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 500);
}

// The same grid on both layers is free where Out's and In's distributions agree, and not in
// general (so the brute-force comparison above is not trivially all zeros). Input rows are split
// as the outputs are (LayerLayout), so between two 3x3 layers of one size on one grid the rows
// stay; the channels stay too while Pc = 1 (the k-block's channels are the next layer's input
// slices over its k-fibre), and move when both Pk and Pc split them.
TEST(Redistribution, SameGridMovesOnlyChannelsSplitBothWays) {
  const LayerPair& p = kPairs[0];
  for (const GridDims d : {GridDims{.Pn = 1, .Pk = 2, .Pc = 1, .Ph = 2, .Pw = 1},
                           GridDims{.Pn = 1, .Pk = 1, .Pc = 2, .Ph = 2, .Pw = 2},
                           GridDims{.Pn = 3, .Pk = 1, .Pc = 1, .Ph = 3, .Pw = 1}}) {
    const RedistributionStats stats = redistribution_stats(LayerLayout(p.a, d), LayerLayout(p.b, d));
    EXPECT_EQ(stats.max_words, 0) << d.to_string();
  }
  const GridDims d{.Pn = 1, .Pk = 2, .Pc = 2, .Ph = 2, .Pw = 1};
  const RedistributionStats stats = redistribution_stats(LayerLayout(p.a, d), LayerLayout(p.b, d));
  EXPECT_GT(stats.max_words, 0);
  EXPECT_GT(stats.mean_words, 0);
}

// The fast path (same data-parallel grid on both layers: nothing moves) agrees with the general
// per-rank count, which is checked against brute force above.
TEST(Redistribution, SameDataParallelGridMovesNothing) {
  for (const LayerPair& p : kPairs) {
    for (int64_t pn = 1; pn <= p.a.N; ++pn) {
      const GridDims d{.Pn = pn};
      const LayerLayout from(p.a, d);
      const LayerLayout to(p.b, d);
      for (int64_t r = 0; r < d.size(); ++r) EXPECT_EQ(redistribution_words(from, to, r), 0);
      const RedistributionStats stats = redistribution_stats(from, to);
      EXPECT_EQ(stats.max_words, 0);
      EXPECT_EQ(stats.mean_words, 0);
    }
  }
}

TEST(Redistribution, RejectsMismatchedLayersAndRanks) {
  const LayerPair& p = kPairs[0];
  const LayerLayout from(p.a, GridDims{});
  ConvShape b = p.b;
  b.C = 4;
  EXPECT_TRUE(throws_input_error([&] { redistribution_stats(from, LayerLayout(b, GridDims{})); },
                                 {"C=4", "5"}));
  b = p.b;
  b.H = 8;
  EXPECT_TRUE(throws_input_error([&] { redistribution_words(from, LayerLayout(b, GridDims{}), 0); },
                                 {"H=8", "9"}));
  b = p.b;
  b.N = 2;
  EXPECT_TRUE(throws_input_error([&] { redistribution_stats(from, LayerLayout(b, GridDims{})); },
                                 {"N=2", "3"}));
  b = p.b;
  b.W = 9;
  EXPECT_TRUE(throws_input_error([&] { redistribution_stats(from, LayerLayout(b, GridDims{})); },
                                 {"W=9", "8"}));
  const LayerLayout to2(p.b, GridDims{.Pn = 2});
  EXPECT_TRUE(
      throws_input_error([&] { redistribution_stats(from, to2); }, {"1,1,1,1,1", "2,1,1,1,1"}));
  const LayerLayout to(p.b, GridDims{});
  EXPECT_TRUE(throws_input_error([&] { redistribution_words(from, to, 1); }, {"rank=1"}));
  EXPECT_TRUE(throws_input_error([&] { redistribution_words(from, to, -1); }, {"rank=-1"}));
}

}  // namespace
}  // namespace convgrid

namespace convgrid {
namespace {

// Owner of every element of a placement's activation, indexed n * F + feature (F = C*H*W per
// sample, the flattened view's index), so that a tensor and its flattened view compare.
std::vector<int64_t> flat_owners(const Placement& p) {
  const Box4& t = p.tensor();
  const int64_t F = t.extent(1) * t.extent(2) * t.extent(3);
  std::vector<int64_t> owner(t.extent(0) * F, -1);
  for (int64_t r = 0; r < p.dims().size(); ++r) {
    for_each_run(p.slice(r), [&](int64_t n, int64_t c, int64_t y, int64_t x0, int64_t x1, int64_t) {
      for (int64_t x = x0; x < x1; ++x) {
        int64_t& o = owner[n * F + (c * t.extent(2) + y) * t.extent(3) + x];
        EXPECT_EQ(o, -1) << "element held twice";
        o = r;
      }
    });
  }
  for (int64_t o : owner) EXPECT_NE(o, -1) << "element held by no rank";
  return owner;
}

void check_placements(const Placement& from, const Placement& to) {
  const std::vector<int64_t> old_owner = flat_owners(from), new_owner = flat_owners(to);
  ASSERT_EQ(old_owner.size(), new_owner.size());
  const int64_t ranks = from.dims().size();
  std::vector<int64_t> forward(ranks, 0), backward(ranks, 0);
  for (size_t i = 0; i < old_owner.size(); ++i) {
    if (old_owner[i] == new_owner[i]) continue;
    ++forward[new_owner[i]];
    ++backward[old_owner[i]];
  }
  const RedistributionFigures f = redistribution_figures(from, to);
  // The node level's split, with nodes of 2, 3, 4 and 6 consecutive ranks (a box of the grid or
  // not, the last node short or not): words from the other ranks of the node.
  for (const int64_t node : {2, 3, 4, 6}) {
    SCOPED_TRACE(::testing::Message() << "ranks per node " << node);
    std::vector<int64_t> forward_node(ranks, 0), backward_node(ranks, 0);
    for (size_t i = 0; i < old_owner.size(); ++i) {
      if (old_owner[i] == new_owner[i] || old_owner[i] / node != new_owner[i] / node) continue;
      ++forward_node[new_owner[i]];
      ++backward_node[old_owner[i]];
    }
    const RedistributionFigures split = redistribution_figures(from, to, node);
    CommLoad want_forward, want_backward;
    for (int64_t r = 0; r < ranks; ++r) {
      want_forward = want_forward.max_with({0, 0, 0, forward[r] - forward_node[r], forward_node[r]});
      want_backward = want_backward.max_with({0, 0, 0, backward[r] - backward_node[r], backward_node[r]});
    }
    EXPECT_EQ(split.forward.max_load.network_words, want_forward.network_words);
    EXPECT_EQ(split.forward.max_load.node_words, want_forward.node_words);
    EXPECT_EQ(split.backward.max_load.network_words, want_backward.network_words);
    EXPECT_EQ(split.backward.max_load.node_words, want_backward.node_words);
    EXPECT_EQ(split.forward.max_words, f.forward.max_words);
  }
  // Without a node level every word is the network's.
  EXPECT_EQ(f.forward.max_load.network_words, f.forward.max_words);
  EXPECT_EQ(f.forward.max_load.node_words, 0);
  EXPECT_DOUBLE_EQ(f.forward.max_load.network_steps, static_cast<double>(f.forward.max_load.messages));
  EXPECT_EQ(f.forward.max_words, *std::max_element(forward.begin(), forward.end()));
  EXPECT_EQ(f.backward.max_words, *std::max_element(backward.begin(), backward.end()));
  int64_t total = 0;
  for (int64_t w : forward) total += w;
  EXPECT_DOUBLE_EQ(f.forward.mean_words, static_cast<double>(total) / static_cast<double>(ranks));
  EXPECT_DOUBLE_EQ(f.backward.mean_words, static_cast<double>(total) / static_cast<double>(ranks));
}

// Pooled outputs (3x3 pad 1 on 9x8, pooled to 4x4), a flatten into a fully connected layer
// (after pooling 3x3 to 2x2), and a residual shortcut (Out to Out): both directions against
// per-element owners, on every pair of grids.
TEST(Redistribution, PooledFlattenedAndResidualMovesMatchBruteForce) {
  const ConvShape conv_a = ConvShape::parse("N=3,C=2,H=9,W=8,K=4,R=3,S=3,pad=1");
  const ConvShape conv_b = ConvShape::parse("N=3,C=4,H=4,W=4,K=3,R=3,S=3,pad=1");
  const ConvShape small = ConvShape::parse("N=2,C=2,H=5,W=5,K=3,R=3,S=3");
  const ConvShape fc = ConvShape::parse("N=2,C=12,H=1,W=1,K=5,R=1,S=1");
  const ConvShape same_out = ConvShape::parse("N=3,C=3,H=9,W=8,K=4,R=1,S=1");
  int64_t checked = 0;
  for (int64_t ranks : {1, 2, 3, 4, 6}) {
    for (const GridDims& da : all_grids(ranks)) {
      for (const GridDims& db : all_grids(ranks)) {
        SCOPED_TRACE(::testing::Message() << da.to_string() << " -> " << db.to_string());
        if (da.fits(conv_a) && db.fits(conv_b)) {
          check_placements(Placement::pooled_output_of(LayerLayout(conv_a, da), 4, 4),
                           Placement::input_of(LayerLayout(conv_b, db)));
          ++checked;
        }
        if (da.fits(small) && db.fits(fc)) {
          check_placements(Placement::pooled_output_of(LayerLayout(small, da), 2, 2),
                           Placement::input_of(LayerLayout(fc, db)));
          ++checked;
        }
        if (da.fits(conv_a) && db.fits(same_out)) {
          check_placements(Placement::output_of(LayerLayout(conv_a, da)),
                           Placement::output_of(LayerLayout(same_out, db)));
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 300);
}

// A concat (nn/network.hpp) of two 2-channel operands, 9 x 8, joined on the first
// operand's grid: the joined placement partitions the tensor, each operand's window holds the
// joined owners of its channels, operands move into their windows and the joined activation into
// the next layer as brute force counts, and pooling keeps the blocks (a joined placement joined).
TEST(Redistribution, ConcatOperandsMoveIntoTheirWindowsOfTheJoinedPlacement) {
  const ConvShape first = ConvShape::parse("N=3,C=3,H=9,W=8,K=2,R=3,S=3,pad=1");
  const ConvShape second = ConvShape::parse("N=3,C=2,H=9,W=8,K=2,R=1,S=1");
  const ConvShape next = ConvShape::parse("N=3,C=4,H=9,W=8,K=2,R=3,S=3,pad=1");
  const Box4 joined_tensor{{Range{0, 3}, Range{0, 4}, Range{0, 9}, Range{0, 8}}};
  int64_t checked = 0, empty_blocks = 0;
  for (int64_t ranks : {1, 2, 3, 4, 6}) {
    for (const GridDims& da : all_grids(ranks)) {
      if (!da.fits(first)) continue;
      const Placement joined = Placement::joined(da, joined_tensor);
      const std::vector<int64_t> owner = flat_owners(joined);
      const Placement windows[] = {joined.window(0, 2), joined.window(2, 2)};
      for (int64_t w = 0; w < 2; ++w) {
        const std::vector<int64_t> part = flat_owners(windows[w]);
        const int64_t C = windows[w].tensor().extent(1), offset = 2 * w;
        for (int64_t n = 0; n < 3; ++n) {
          for (int64_t i = 0; i < C * 72; ++i) {
            ASSERT_EQ(part[n * C * 72 + i], owner[n * 4 * 72 + offset * 72 + i]);
          }
        }
      }
      for (int64_t r = 0; r < ranks; ++r) empty_blocks += joined.slice(r).empty();
      for (const GridDims& db : all_grids(ranks)) {
        SCOPED_TRACE(::testing::Message() << da.to_string() << " -> " << db.to_string());
        if (db.fits(second)) {
          check_placements(Placement::output_of(LayerLayout(second, db)), windows[1]);
          ++checked;
        }
        if (db.fits(next)) {
          check_placements(joined, Placement::input_of(LayerLayout(next, db)));
          ++checked;
        }
      }
      check_placements(Placement::output_of(LayerLayout(first, da)), windows[0]);
      const Placement pooled = joined.pooled(4, 3);
      const Placement fresh = Placement::joined(da, Box4{{Range{0, 3}, Range{0, 4}, Range{0, 4}, Range{0, 3}}});
      const Placement out_pooled = Placement::output_of(LayerLayout(first, da)).pooled(4, 3);
      const Placement pooled_out = Placement::pooled_output_of(LayerLayout(first, da), 4, 3);
      for (int64_t r = 0; r < ranks; ++r) {
        EXPECT_EQ(pooled.slice(r).box, fresh.slice(r).box);
        EXPECT_EQ(out_pooled.slice(r).box, pooled_out.slice(r).box);
        EXPECT_EQ(out_pooled.slice(r).flat, pooled_out.slice(r).flat);
      }
    }
  }
  EXPECT_GT(checked, 200);
  EXPECT_GT(empty_blocks, 0) << "some grid has more k x c ranks than the 4 channels";
}

// Out pooled (Placement::pooled, what pooling layers keep in training) is pooled_output_of, slice
// for slice on every rank of every grid, grouped layers and blocks of one included; pooled to the
// output's own extents it is Out itself.
TEST(Redistribution, PooledOutEqualsPooledOutputOf) {
  const ConvShape shapes[] = {ConvShape::parse("N=3,C=2,H=9,W=8,K=5,R=3,S=3,pad=1"),
                              ConvShape::parse("N=2,C=6,H=7,W=6,K=6,R=3,S=3,pad=1,groups=3"),
                              ConvShape::parse("N=2,C=3,H=3,W=3,K=2,R=1,S=1")};
  int64_t checked = 0;
  for (const ConvShape& shape : shapes) {
    for (int64_t ranks : {1, 2, 3, 4, 6, 8}) {
      for (const GridDims& d : all_grids(ranks)) {
        if (!d.fits(shape)) continue;
        const LayerLayout layout(shape, d);
        const std::pair<int64_t, int64_t> extents[] = {{shape.Ho(), shape.Wo()}, {2, 2}, {1, 3}};
        for (const auto& [H, W] : extents) {
          SCOPED_TRACE(::testing::Message() << shape.to_string() << " " << d.to_string() << " to " << H << "x" << W);
          const Placement want = Placement::pooled_output_of(layout, H, W);
          const Placement got = Placement::output_of(layout).pooled(H, W);
          ASSERT_EQ(got.tensor(), want.tensor());
          for (int64_t r = 0; r < ranks; ++r) {
            ASSERT_EQ(got.slice(r).box, want.slice(r).box) << "rank " << r;
            ASSERT_EQ(got.slice(r).flat, want.slice(r).flat) << "rank " << r;
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 100);
}

TEST(Redistribution, RejectsPoolingBeyondTheOutput) {
  const LayerLayout a(ConvShape::parse("N=3,C=2,H=9,W=8,K=4,R=3,S=3,pad=1"), GridDims{});
  EXPECT_TRUE(throws_input_error([&] { Placement::pooled_output_of(a, 10, 4); }, {"10x4", "9x8"}));
  const LayerLayout fc(ConvShape::parse("N=3,C=13,H=1,W=1,K=5,R=1,S=1"), GridDims{});
  EXPECT_TRUE(throws_input_error(
      [&] { redistribution_figures(Placement::pooled_output_of(a, 3, 4), Placement::input_of(fc)); },
      {"C=13", "C=4,H=3,W=4"}));
}

// Placement::slices_between against the slices one by one: on every box of coordinates of every
// grid of 1 to 12 ranks, for Out, In, pooled Out, a joined placement and a window of it, what the
// box's slices hold of a few probe boxes (whole tensor, halves, a window, one element) is the sum
// of slice_overlap over the box's ranks, and the sum is refused only when some slice there is
// a flat part of a block.
TEST(Redistribution, SlicesBetweenSumTheSlicesOfTheBox) {
  const ConvShape shape = ConvShape::parse("N=3,C=5,H=7,W=6,K=3,R=3,S=3,pad=1");
  const ConvShape grouped = ConvShape::parse("N=2,C=6,H=5,W=4,K=6,R=3,S=3,pad=1,groups=6");
  int64_t sums = 0, refused = 0;
  for (int64_t ranks = 1; ranks <= 12; ++ranks) {
    for (const GridDims& d : all_grids(ranks)) {
      std::vector<Placement> placements;
      for (const ConvShape& s : {shape, grouped}) {
        if (!d.fits(s)) continue;
        const LayerLayout layout(s, d);
        placements.push_back(Placement::output_of(layout));
        placements.push_back(Placement::input_of(layout));
        placements.push_back(Placement::pooled_output_of(layout, 3, 2));
      }
      const Placement joined = Placement::joined(d, Box4{{Range{0, 3}, Range{0, 7}, Range{0, 5}, Range{0, 4}}});
      placements.push_back(joined);
      placements.push_back(joined.window(2, 4));
      for (const Placement& p : placements) {
        const Box4& t = p.tensor();
        const auto half = [&](int dim, bool upper) {
          Box4 b = t;
          const int64_t mid = t.extent(dim) / 2;
          b.r[dim] = upper ? Range{mid, t.extent(dim)} : Range{0, mid};
          return b;
        };
        const Box4 probes[] = {t, half(1, false), half(2, true), half(3, false),
                               Box4{{Range{1, 2}, Range{1, 3}, Range{1, 3}, Range{0, 2}}},
                               Box4{{Range{0, 1}, Range{0, 1}, Range{0, 1}, Range{0, 1}}}};
        const std::array<int64_t, 5> e = d.extents();
        // every first..last pair in each dimension
        for (int64_t code = 0; code < e[0] * e[0] * e[1] * e[1] * e[2] * e[2] * e[3] * e[3] * e[4] * e[4]; ++code) {
          std::array<int64_t, 5> lo{}, hi{};
          int64_t rest = code;
          bool ordered = true;
          for (int i = 0; i < 5; ++i) {
            lo[i] = rest % e[i];
            rest /= e[i];
            hi[i] = rest % e[i];
            rest /= e[i];
            ordered = ordered && lo[i] <= hi[i];
          }
          if (!ordered) continue;
          const GridCoord first{lo[0], lo[1], lo[2], lo[3], lo[4]}, last{hi[0], hi[1], hi[2], hi[3], hi[4]};
          const std::optional<SliceSum> sum = p.slices_between(first, last);
          bool all_whole = true, any_empty = false;
          std::vector<Slice> slices;
          for (int64_t n = lo[0]; n <= hi[0]; ++n)
            for (int64_t k = lo[1]; k <= hi[1]; ++k)
              for (int64_t c = lo[2]; c <= hi[2]; ++c)
                for (int64_t h = lo[3]; h <= hi[3]; ++h)
                  for (int64_t w = lo[4]; w <= hi[4]; ++w) {
                    const Slice s = p.slice_at(GridCoord{n, k, c, h, w});
                    all_whole = all_whole && s.flat.begin == 0 && s.flat.end == s.box.volume();
                    any_empty = any_empty || s.empty();
                    slices.push_back(s);
                  }
          // Refused only where a slice is flat (or empty: a flat split of an empty block may
          // look whole).
          ASSERT_TRUE(sum ? all_whole : !all_whole || any_empty) << d.to_string();
          if (!sum) {
            ++refused;
            continue;
          }
          for (const Box4& probe : probes) {
            int64_t want = 0;
            for (const Slice& s : slices) want += slice_overlap(s, t, Slice::whole(probe), t);
            ASSERT_EQ(sum->overlap(probe), want) << d.to_string();
            ASSERT_EQ(sum->overlap(Slice::whole(probe)), want);
          }
          const Slice flat{t, Range{t.volume() / 5, t.volume() / 2 + 1}};  // 3 to 7 sub-boxes
          int64_t want = 0;
          for (const Slice& s : slices) want += slice_overlap(s, t, flat, t);
          ASSERT_EQ(sum->overlap(flat), want) << d.to_string();
          ++sums;
        }
      }
    }
  }
  EXPECT_GT(sums, 10000);
  EXPECT_GT(refused, 100) << "some grid splits a block of fewer channels than parts";
}

}  // namespace
}  // namespace convgrid
