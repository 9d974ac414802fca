// exchange_figures (train/train_layer.hpp) for pooling's input regions: the words a rank sends,
// found from the sum of every rank's region (pool_input_regions, a product per rank), equal
// those found by intersecting its slice with each other rank's region in turn, and so do the
// other figures; on every grid of 1 to 12 ranks, for the pooling windows ResNet and VGG use, a
// window wider than its stride, global pooling and ceil_mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "layout/layer_layout.hpp"
#include "model/redistribution.hpp"
#include "train/pool_kernel.hpp"
#include "train/train_layer.hpp"

namespace convgrid {
namespace {

PoolGeometry geometry(int64_t window_h, int64_t window_w, int64_t stride, int64_t pad, bool ceil_mode, int64_t H,
                      int64_t W) {
  PoolParams p{window_h, window_w, stride, stride, pad, pad};
  p.ceil_mode = ceil_mode;
  return PoolGeometry{p, true, H, W};
}

TEST(ExchangeFigures, PoolingRegionsSummedEqualRankByRank) {
  // Out is 3 x 4 x 9 x 8 (one with 2 channels, so that channel splits go flat).
  const ConvShape shapes[] = {ConvShape::parse("N=3,C=2,H=9,W=8,K=4,R=3,S=3,pad=1"),
                              ConvShape::parse("N=2,C=3,H=9,W=8,K=2,R=3,S=3,pad=1")};
  const PoolGeometry pools[] = {geometry(3, 3, 2, 1, false, 9, 8),   // ResNet's max pooling
                                geometry(2, 2, 2, 0, false, 9, 8),   // VGG's
                                geometry(3, 3, 1, 1, false, 9, 8),   // halos on both sides
                                geometry(3, 3, 2, 0, true, 9, 8),    // ceil_mode, last window short
                                geometry(9, 8, 1, 0, false, 9, 8)};  // global
  int64_t summed = 0, each = 0, moving = 0;
  for (const ConvShape& shape : shapes) {
    for (int64_t ranks = 1; ranks <= 12; ++ranks) {
      for (const GridDims& d : all_grids(ranks)) {
        if (!d.fits(shape)) continue;
        const Placement held = Placement::output_of(LayerLayout(shape, d));
        for (const PoolGeometry& g : pools) {
          const int64_t H = g.params.out_h(g.H), W = g.params.out_w(g.W);
          const Placement pooled = held.pooled(H, W);
          const auto region_of = [&](int64_t r) { return Slice::whole(pool_input_region(g, pooled.slice(r))); };
          const std::optional<SliceSum> sum = pool_input_regions(g, pooled);
          if (!sum) {
            ++each;
            continue;
          }
          ++summed;
          for (int64_t r = 0; r < ranks; ++r) {
            SCOPED_TRACE(::testing::Message() << shape.to_string() << " on " << d.to_string() << " window "
                                              << g.params.window_h << " stride " << g.params.stride_h
                                              << ", rank " << r);
            const ExchangeFigures fast =
                exchange_figures(held, held.tensor(), region_of, WantedByAll::overlapping(sum), ranks, r);
            const ExchangeFigures slow =
                exchange_figures(held, held.tensor(), region_of, WantedByAll::overlapping(std::nullopt), ranks, r);
            EXPECT_EQ(fast.send_words, slow.send_words);
            EXPECT_EQ(fast.recv_words, slow.recv_words);
            EXPECT_EQ(fast.moves, slow.moves);
            EXPECT_EQ(fast.identity, slow.identity);
            EXPECT_EQ(fast.staging_bytes, slow.staging_bytes);
            moving += fast.send_words > 0;
          }
        }
      }
    }
  }
  EXPECT_GT(summed, 200);
  EXPECT_GT(each, 10) << "some grid splits 2 channels flat";
  EXPECT_GT(moving, 1000) << "halos move";
}

}  // namespace
}  // namespace convgrid
