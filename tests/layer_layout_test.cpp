// Block, slice, halo and local-shape arithmetic (src/layout) checked without MPI: partitions
// cover every element once, halos rebuild each rank's needed input, and a serial simulation of
// the grid algorithm's forward pass (every rank's local convolution on its local shape) equals
// the global reference convolution.
#include "layout/layer_layout.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "awkward_shapes.hpp"
#include "convgrid/local_conv.hpp"
#include "layout/pack.hpp"

namespace convgrid {
namespace {

using ::convgrid::test_data::kAwkwardGroupedShapes;
using ::convgrid::test_data::kAwkwardShapes;

// The ungrouped awkward shapes, then the grouped ones.
std::vector<const char*> awkward_shapes() {
  std::vector<const char*> all(std::begin(kAwkwardShapes), std::end(kAwkwardShapes));
  all.insert(all.end(), std::begin(kAwkwardGroupedShapes), std::end(kAwkwardGroupedShapes));
  return all;
}

std::vector<GridDims> grids_up_to(int64_t max_p) {
  std::vector<GridDims> out;
  for (int64_t p = 1; p <= max_p; ++p) {
    for (const GridDims& g : all_grids(p)) out.push_back(g);
  }
  return out;
}

// Counts how often each element of a tensor of `extents` is covered by the slices.
template <class SliceOf>
std::vector<int> coverage(const std::array<int64_t, 4>& ext, const GridDims& d, SliceOf slice_of) {
  std::vector<int> seen(ext[0] * ext[1] * ext[2] * ext[3], 0);
  Box4 whole{{Range{0, ext[0]}, Range{0, ext[1]}, Range{0, ext[2]}, Range{0, ext[3]}}};
  for (int64_t r = 0; r < d.size(); ++r) {
    Slice s = slice_of(d.coord_of(r));
    int64_t total = 0;
    for_each_run(s, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t off) {
      EXPECT_EQ(off, total);
      for (int64_t x = x0; x < x1; ++x) ++seen[whole.offset(a, b, y, x)];
      total += x1 - x0;
    });
    EXPECT_EQ(total, s.size());
  }
  return seen;
}

// Calls f(layout) for every awkward shape and every grid of up to max_p ranks that fits it.
template <class F>
void for_each_layout(int64_t max_p, F&& f) {
  for (const char* text : awkward_shapes()) {
    const ConvShape s = ConvShape::parse(text);
    for (const GridDims& d : grids_up_to(max_p)) {
      if (!d.fits(s)) continue;
      SCOPED_TRACE(std::string(text) + " grid " + d.to_string());
      f(LayerLayout(s, d));
    }
  }
}

TEST(LayerLayout, AtRestSlicesCoverEveryElementOnce) {
  for_each_layout(8, [](const LayerLayout& L) {
    const ConvShape& s = L.shape();
    const GridDims& d = L.dims();
    for (int v : coverage({s.N, s.C, s.H, s.W}, d, [&](GridCoord g) { return L.in_slice(g); })) {
      ASSERT_EQ(v, 1);
    }
    for (int v :
         coverage({s.N, s.K, s.Ho(), s.Wo()}, d, [&](GridCoord g) { return L.out_slice(g); })) {
      ASSERT_EQ(v, 1);
    }
    for (int v : coverage({s.K, s.Cg(), s.R, s.S}, d, [&](GridCoord g) { return L.ker_slice(g); })) {
      ASSERT_EQ(v, 1);
    }
  });
}

TEST(LayerLayout, HaloPiecesRebuildTheNeededInput) {
  for_each_layout(8, [](const LayerLayout& L) {
    const GridDims& d = L.dims();
    for (int64_t r = 0; r < d.size(); ++r) {
      GridCoord g = d.coord_of(r);
      Box4 need = L.in_needed(g);
      std::vector<int> seen(need.volume(), 0);
      auto mark = [&](const Box4& b) {
        for_each_read_run(Slice::whole(b), &L.read(),
                          [&](int64_t a, int64_t c, int64_t y, int64_t x0, int64_t x1, int64_t) {
                            for (int64_t x = x0; x < x1; ++x) ++seen[need.offset(a, c, y, x)];
                          });
      };
      mark(need.intersect(L.in_block(g)));
      for (const HaloPiece& p : L.halo_recv(g)) {
        mark(p.box);
        EXPECT_EQ(L.read_count(p.box), p.words);
      }
      for_each_run(Slice::whole(need), [&](int64_t a, int64_t c, int64_t y, int64_t x0, int64_t x1,
                                           int64_t) {
        for (int64_t x = x0; x < x1; ++x) {
          ASSERT_EQ(seen[need.offset(a, c, y, x)], L.read().row(y) && L.read().col(x) ? 1 : 0);
        }
      });
      // What g receives from p is what p sends to g.
      for (const HaloPiece& p : L.halo_recv(g)) {
        GridCoord peer = g;
        peer.h = p.peer / d.Pw;
        peer.w = p.peer % d.Pw;
        bool found = false;
        for (const HaloPiece& q : L.halo_send(peer)) {
          if (q.peer == g.h * d.Pw + g.w) {
            EXPECT_EQ(q.box, p.box);
            found = true;
          }
        }
        EXPECT_TRUE(found);
      }
    }
  });
}

TEST(LayerLayout, ReadCountMatchesBruteForce) {
  for (const char* text : kAwkwardShapes) {
    ConvShape s = ConvShape::parse(text);
    ReadPixels read(s);
    for (int64_t y = 0; y < s.H; ++y) {
      bool used = false;
      for (int64_t h = 0; h < s.Ho(); ++h)
        for (int64_t r = 0; r < s.R; ++r) used |= h * s.stride_h + r * s.dil_h - s.pad_top == y;
      EXPECT_EQ(read.row(y), used) << text << " row " << y;
    }
    for (int64_t x = 0; x < s.W; ++x) {
      bool used = false;
      for (int64_t w = 0; w < s.Wo(); ++w)
        for (int64_t q = 0; q < s.S; ++q) used |= w * s.stride_w + q * s.dil_w - s.pad_left == x;
      EXPECT_EQ(read.col(x), used) << text << " col " << x;
    }
  }
}

// The read pixels of every rank's at-rest In slice (flat ones included), counted pixel by pixel.
TEST(LayerLayout, SliceReadCountMatchesPixelByPixel) {
  for_each_layout(6, [](const LayerLayout& L) {
    for (int64_t r = 0; r < L.dims().size(); ++r) {
      const Slice s = L.in_slice(L.dims().coord_of(r));
      int64_t n = 0;
      for_each_run(s, [&](int64_t, int64_t, int64_t y, int64_t x0, int64_t x1, int64_t) {
        for (int64_t x = x0; x < x1; ++x) n += L.read().row(y) && L.read().col(x);
      });
      EXPECT_EQ(L.read_count(s), n) << "rank " << r;
    }
  });
}

TEST(LayerLayout, UnreadPixelsExistForStrideOverFilter) {
  ReadPixels read(ConvShape::parse("N=1,C=1,H=8,W=8,K=1,R=1,S=1,stride=2"));
  EXPECT_FALSE(read.all_read());
  EXPECT_EQ(read.rows_in({0, 8}), 4);
  EXPECT_TRUE(read.row(6));
  EXPECT_FALSE(read.row(7));
}

TEST(LayerLayout, WorkedExampleFromTheHeader) {
  LayerLayout L(ConvShape::parse("N=1,C=1,H=8,W=8,K=1,R=3,S=3,pad=1"), GridDims{1, 1, 1, 2, 1});
  EXPECT_EQ(L.rows_owned(0), (Range{0, 4}));
  EXPECT_EQ(L.rows_needed(0), (Range{0, 5}));
  EXPECT_EQ(L.rows_owned(1), (Range{4, 8}));
  EXPECT_EQ(L.rows_needed(1), (Range{3, 8}));
  auto halo = L.halo_recv({0, 0, 0, 0, 0});
  ASSERT_EQ(halo.size(), 1u);
  EXPECT_EQ(halo[0].box.r[2], (Range{4, 5}));
  EXPECT_EQ(halo[0].words, 8);
  halo = L.halo_recv({0, 0, 0, 1, 0});
  ASSERT_EQ(halo.size(), 1u);
  EXPECT_EQ(halo[0].box.r[2], (Range{3, 4}));
  EXPECT_EQ(halo[0].words, 8);
}

TEST(LayerLayout, HaloWiderThanANeighbourComesFromSeveralRanks) {
  // 7x7 filter, 6 output rows over 6 ranks: rank 0 needs rows [0,4), owned by ranks 0..3.
  LayerLayout L(ConvShape::parse("N=1,C=1,H=6,W=1,K=1,R=7,S=1,pad=3x0"), GridDims{1, 1, 1, 6, 1});
  auto halo = L.halo_recv({0, 0, 0, 0, 0});
  EXPECT_EQ(halo.size(), 3u);
}

// What a rank convolves in the serial simulation below: an input box and a local shape.
struct RankInput {
  Box4 box;
  ConvShape shape;
};
using InputOf = std::function<std::optional<RankInput>(const LayerLayout&, GridCoord)>;

// Serial simulation of the forward pass for every awkward shape on every grid of up to 6 ranks:
// each rank convolves the box input_of gives it (unread pixels set to NaN, so reading one would
// show) with its weight block on input_of's shape; the sum over c-blocks is the reference. A
// grid where input_of gives some rank nothing is skipped. Returns the ranks simulated.
int64_t check_forward_from_local_parts(uint32_t seed, const InputOf& input_of) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  int64_t ranks = 0;
  for (const char* text : awkward_shapes()) {
    ConvShape s = ConvShape::parse(text);
    std::vector<float> in(s.input_elems()), ker(s.weight_elems()), ref(s.output_elems());
    for (float& v : in) v = dist(gen);
    for (float& v : ker) v = dist(gen);
    reference::forward(s, in.data(), ker.data(), nullptr, ref.data());
    const Box4 in_all = input_box(s), ker_all = weight_box(s), out_all = output_box(s);
    for (const GridDims& d : grids_up_to(6)) {
      if (!d.fits(s)) continue;
      LayerLayout L(s, d);
      SCOPED_TRACE(std::string(text) + " grid " + d.to_string());
      std::vector<std::optional<RankInput>> parts;
      for (int64_t r = 0; r < d.size(); ++r) parts.push_back(input_of(L, d.coord_of(r)));
      if (std::ranges::any_of(parts, [](const auto& p) { return !p; })) continue;
      std::vector<float> out(s.output_elems(), 0.0f);
      for (int64_t r = 0; r < d.size(); ++r) {
        const GridCoord g = d.coord_of(r);
        const auto& [box, ls] = *parts[static_cast<size_t>(r)];
        EXPECT_NO_THROW(ls.validate());
        const Box4 kb = L.ker_block(g), ob = L.out_block(g);
        EXPECT_EQ(ls.Ho(), ob.extent(2));
        EXPECT_EQ(ls.Wo(), ob.extent(3));
        if (ls.Ho() != ob.extent(2) || ls.Wo() != ob.extent(3)) return ranks;
        const float poison = std::numeric_limits<float>::quiet_NaN();
        std::vector<float> lin(box.volume(), poison), lker(kb.volume()), lout(ob.volume());
        std::vector<float> packed(box.volume());
        const int64_t n = pack_box(Slice::whole(box), &L.read(), in_all, in.data(), packed.data());
        unpack_box(Slice::whole(box), &L.read(), packed.data(), box, lin.data(), false);
        EXPECT_EQ(n, L.read_count(box));
        pack_box(Slice::whole(kb), nullptr, ker_all, ker.data(), lker.data());
        reference::forward(ls, lin.data(), lker.data(), nullptr, lout.data());
        unpack_box(Slice::whole(ob), nullptr, lout.data(), out_all, out.data(), true);
        ++ranks;
      }
      for (size_t i = 0; i < out.size(); ++i) {
        EXPECT_NEAR(out[i], ref[i], 1e-4) << i;
        if (std::abs(out[i] - ref[i]) > 1e-4) return ranks;
      }
    }
  }
  return ranks;
}

// The header's example: a depthwise layer split over channels moves no input at all.
TEST(LayerLayout, DepthwiseChannelSplitHoldsItsOwnInput) {
  const LayerLayout L(ConvShape::parse("N=2,C=64,H=8,W=8,K=64,R=3,S=3,pad=1,groups=64"), GridDims{1, 4, 1, 1, 1});
  EXPECT_EQ(L.in_fibre_size(), 1);
  for (int64_t pk = 0; pk < 4; ++pk) {
    const GridCoord g{0, pk, 0, 0, 0};
    EXPECT_EQ(L.group_block(pk), (Range{16 * pk, 16 * pk + 16}));
    EXPECT_EQ(L.k_block(pk), (Range{16 * pk, 16 * pk + 16}));
    EXPECT_EQ(L.c_block(pk, 0), (Range{16 * pk, 16 * pk + 16}));
    EXPECT_EQ(L.in_slice(g).box, L.in_block(g));
    EXPECT_EQ(L.in_slice(g).flat, (Range{0, L.in_block(g).volume()}));
    EXPECT_TRUE(L.input_in_place(g));
    EXPECT_EQ(L.ker_block(g), (Box4{{Range{16 * pk, 16 * pk + 16}, Range{0, 1}, Range{0, 3}, Range{0, 3}}}));
    const ConvShape local = L.local_shape(g);
    EXPECT_EQ(local.groups, 16);
    EXPECT_EQ(local.C, 16);
    EXPECT_EQ(local.K, 16);
  }
}

// G=4 groups (C/G=2, K/G=3) on Pk=8, Pc=2: each group over an input fibre of 2 ranks, which
// split its 3 output channels, and over the c-fibre, which splits its 2 input channels.
TEST(LayerLayout, GroupsSplitOverTheirInputFibre) {
  const LayerLayout L(ConvShape::parse("N=2,C=8,H=5,W=5,K=12,R=3,S=3,pad=1,groups=4"), GridDims{1, 8, 2, 1, 1});
  EXPECT_EQ(L.in_fibre_size(), 2);
  EXPECT_EQ(L.group_block(5), (Range{2, 3}));
  EXPECT_EQ(L.k_block(4), (Range{6, 8}));  // group 2's output channels [6, 9): 2 + 1
  EXPECT_EQ(L.k_block(5), (Range{8, 9}));
  EXPECT_EQ(L.c_block(5, 0), (Range{4, 5}));  // group 2's input channels [4, 6)
  EXPECT_EQ(L.c_block(5, 1), (Range{5, 6}));
  const GridCoord g{0, 5, 1, 0, 0};
  EXPECT_EQ(L.ker_block(g), (Box4{{Range{8, 9}, Range{1, 2}, Range{0, 3}, Range{0, 3}}}));
  EXPECT_EQ(L.local_shape(g).groups, 1);
  // In's block of (pk 4 and 5, pc 1) is channel 5, split between the two.
  EXPECT_EQ(L.in_block(g), (Box4{{Range{0, 2}, Range{5, 6}, Range{0, 5}, Range{0, 5}}}));
  EXPECT_EQ(L.in_slice(g).size(), 25);  // the second half of 2 x 1 x 5 x 5
  EXPECT_EQ(L.in_slice(g).flat, split_block(L.in_block(g), 2, 1).flat);
  EXPECT_FALSE(L.input_in_place(g));
}

// Every rank on its needed input and local shape.
TEST(LayerLayout, LocalShapesReproduceTheGlobalConvolution) {
  const int64_t ranks = check_forward_from_local_parts(7, [](const LayerLayout& L, GridCoord g) {
    return std::optional<RankInput>(RankInput{L.in_needed(g), L.local_shape(g)});
  });
  EXPECT_GT(ranks, 0);
}

// A 1x1 filter at stride 2 on an even image never reads the last row and column. The needed
// input then ends one short of the at-rest block; the kernel can still take the block itself.
TEST(LayerLayout, StridedOneByOneRunsOnTheAtRestBlock) {
  LayerLayout L(ConvShape::parse("N=4,C=8,H=28,W=28,K=16,R=1,S=1,stride=2"), GridDims{2, 1, 1, 1, 1});
  const GridCoord g{1, 0, 0, 0, 0};
  EXPECT_NE(L.in_needed(g), L.in_block(g));
  EXPECT_EQ(L.rows_needed(0), (Range{0, 27}));
  EXPECT_FALSE(L.input_in_place(g));
  EXPECT_TRUE(L.input_inside_block(g));
  const ConvShape b = L.block_shape(g);
  EXPECT_EQ(b.H, 28);
  EXPECT_EQ(b.pad_bottom, 0);
  EXPECT_EQ(b.Ho(), 14);
  EXPECT_EQ(b.Wo(), 14);
  // With a k-fibre or a halo the input must be gathered.
  EXPECT_FALSE(LayerLayout(ConvShape::parse("N=4,C=8,H=28,W=28,K=16,R=1,S=1,stride=2"),
                           GridDims{1, 2, 1, 1, 1}).input_inside_block({0, 0, 0, 0, 0}));
  EXPECT_FALSE(LayerLayout(ConvShape::parse("N=4,C=8,H=28,W=28,K=16,R=3,S=3,pad=1"),
                           GridDims{1, 1, 1, 2, 1}).input_inside_block({0, 0, 0, 0, 0}));
}

// A 1x1 filter at stride 2 on 28 rows over Ph=4: output rows [11,14) of ph=3 read rows 22-26,
// and ph=3 owns [21,28). No halo either way, but row 21 comes before the first read row: the
// kernel cannot take the block (a padding of -1), so the input is copied out of it.
TEST(LayerLayout, UnreadRowsBeforeTheFirstReadOneAreNotRunInPlace) {
  LayerLayout L(ConvShape::parse("N=1,C=2,H=28,W=28,K=2,R=1,S=1,stride=2"), GridDims{1, 1, 1, 4, 1});
  const GridCoord g{0, 0, 0, 3, 0};
  EXPECT_EQ(L.rows_owned(3), (Range{21, 28}));
  EXPECT_EQ(L.rows_needed(3), (Range{22, 27}));
  EXPECT_TRUE(L.halo_recv(g).empty());
  EXPECT_TRUE(L.halo_send(g).empty());
  EXPECT_FALSE(L.input_inside_block(g));
  // Every awkward shape on every grid of up to 8 ranks: a block run in place never pads negatively.
  for (const char* text : awkward_shapes()) {
    const ConvShape s = ConvShape::parse(text);
    for (const GridDims& d : grids_up_to(8)) {
      if (!d.fits(s)) continue;
      const LayerLayout l(s, d);
      for (int64_t r = 0; r < d.size(); ++r) {
        if (!l.input_inside_block(d.coord_of(r))) continue;
        const ConvShape b = l.block_shape(d.coord_of(r));
        EXPECT_GE(std::min({b.pad_top, b.pad_left, b.pad_bottom, b.pad_right}), 0) << text << " " << d.to_string();
      }
    }
  }
}

// On grids where every rank's needed input lies inside its block, every rank on its whole
// at-rest block and block_shape: the same result.
TEST(LayerLayout, BlockShapesReproduceTheGlobalConvolution) {
  int64_t larger_blocks = 0;  // ranks whose block goes past their needed input
  const int64_t ranks = check_forward_from_local_parts(11, [&](const LayerLayout& L, GridCoord g) {
    if (!L.input_inside_block(g)) return std::optional<RankInput>();
    if (L.in_block(g) != L.in_needed(g)) ++larger_blocks;
    return std::optional<RankInput>(RankInput{L.in_block(g), L.block_shape(g)});
  });
  EXPECT_GT(ranks, 0);
  EXPECT_GT(larger_blocks, 0) << "no awkward shape has unread rows or columns past its needed input";
}

}  // namespace
}  // namespace convgrid
