// Pooling kernels (train/pool_kernel.hpp) with PyTorch's ceil_mode: whole images against numbers
// computed by torch 1.13 (F.max_pool2d and F.avg_pool2d, count_include_pad=True, float32), and
// images cut into the pieces ranks pool (boxes of rows and columns, flat slices), each from its
// own input region, against the whole.
#include "train/pool_kernel.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace convgrid {
namespace {

Box4 image_box(int64_t N, int64_t C, int64_t H, int64_t W) {
  return Box4{{Range{0, N}, Range{0, C}, Range{0, H}, Range{0, W}}};
}

PoolParams params(int64_t window_h, int64_t window_w, int64_t stride, int64_t pad_h, int64_t pad_w,
                  bool ceil_mode) {
  PoolParams p{window_h, window_w, stride, stride, pad_h, pad_w};
  p.ceil_mode = ceil_mode;
  return p;
}

// One 1 x 1 x H x W image whose element i (row-major) is (7 i mod 13) - 6, the values the torch
// script gave; dout is 1, 2, 3, ... over the output.
struct TorchCase {
  PoolGeometry g;
  std::vector<float> out, din;
};

std::vector<float> image(int64_t H, int64_t W) {
  std::vector<float> x(H * W);
  for (int64_t i = 0; i < H * W; ++i) x[i] = static_cast<float>((i * 7) % 13 - 6);
  return x;
}

void expect_matches_torch(const TorchCase& t) {
  const PoolGeometry& g = t.g;
  const int64_t Ho = g.params.out_h(g.H), Wo = g.params.out_w(g.W);
  ASSERT_EQ(Ho * Wo, static_cast<int64_t>(t.out.size()));
  const Box4 region = image_box(1, 1, g.H, g.W);
  const Slice out_slice = Slice::whole(image_box(1, 1, Ho, Wo));
  const std::vector<float> x = image(g.H, g.W);
  std::vector<float> out(Ho * Wo), dout(Ho * Wo), din(g.H * g.W, 0.0f);
  std::vector<int32_t> argmax(Ho * Wo);
  for (int64_t i = 0; i < Ho * Wo; ++i) dout[i] = static_cast<float>(i + 1);
  pool_forward(g, region, x.data(), out_slice, out.data(), argmax.data());
  for (size_t i = 0; i < out.size(); ++i) EXPECT_NEAR(out[i], t.out[i], 1e-6) << "out[" << i << "]";
  if (t.din.empty()) return;
  pool_backward(g, region, out_slice, dout.data(), argmax.data(), din.data());
  ASSERT_EQ(din.size(), t.din.size());
  for (size_t i = 0; i < din.size(); ++i) EXPECT_NEAR(din[i], t.din[i], 1e-5) << "din[" << i << "]";
}

// 6x7, window 3x2, stride 2, pad 1x0: ceil_mode gives 4x4 (floor 3x3). The last row of windows
// starts at row 5 and covers it, the bottom padding and a row past it (average divisor 2 rows);
// the last column of windows covers column 6 alone (divisor 1 column).
TEST(PoolKernel, CeilModeMatchesTorchWithPadding) {
  const PoolParams ceil = params(3, 2, 2, 1, 0, true);
  expect_matches_torch({{ceil, true, 6, 7},
                        {4, 5, 6, -3, 5, 6, 6, 4, 5, 6, 4, 1, 5, 6, 1, -5},
                        {0, 0,  0, 0,  0, 0, 4,  1, 0, 2, 0, 10, 0,  0, 0,  0, 0,  0, 0, 0,  8,
                         0, 14, 0, 16, 0, 0, 12, 0, 0, 0, 0, 0,  11, 0, 13, 0, 14, 0, 0, 15, 16}});
  expect_matches_torch(
      {{ceil, false, 6, 7},
       {-0.5f, 0.16666667f, 0.83333331f, -3.0f, 0.16666667f, 1.1666666f, 0.0f, -0.33333334f,
        0.66666669f, 1.6666666f, -1.6666666f, -2.0f, 1.0f, 1.5f, -1.25f, -2.5f},
       {0.16666667f, 0.16666667f, 0.33333334f, 0.33333334f, 0.5f,       0.5f,       1.3333334f,
        1.0f,        1.0f,        1.3333334f,  1.3333334f,  1.6666666f, 1.6666666f, 4.0f,
        0.83333331f, 0.83333331f, 1.0f,        1.0f,        1.1666666f, 1.1666666f, 2.6666667f,
        2.3333333f,  2.3333333f,  2.6666665f,  2.6666665f,  3.0f,       3.0f,       6.666667f,
        1.5f,        1.5f,        1.6666666f,  1.6666666f,  1.8333334f, 1.8333334f, 4.0f,
        4.75f,       4.75f,       5.1666665f,  5.1666665f,  5.5833335f, 5.5833335f, 12.0f}});
  // Without ceil_mode the same windows as before: the first three rows and columns of outputs.
  const PoolParams floor = params(3, 2, 2, 1, 0, false);
  expect_matches_torch({{floor, true, 6, 7}, {4, 5, 6, 5, 6, 6, 5, 6, 4}, {}});
  expect_matches_torch({{floor, false, 6, 7},
                        {-0.5f, 0.16666667f, 0.83333331f, 0.16666667f, 1.1666666f, 0.0f,
                         0.66666669f, 1.6666666f, -1.6666666f},
                        {}});
}

// GoogLeNet's MaxPool2d(3, 2, ceil_mode=True) on 8x8: 4x4 (floor 3x3), the last windows 2 wide.
TEST(PoolKernel, CeilModeMatchesTorchWithoutPadding) {
  const PoolParams p = params(3, 3, 2, 0, 0, true);
  expect_matches_torch({{p, true, 8, 8}, {5, 6, 5, 5, 6, 5, 6, 5, 6, 6, 6, 4, 6, 6, 5, 6}, {}});
  expect_matches_torch({{p, false, 8, 8},
                        {-0.77777779f, 0.22222222f, -0.22222222f, 0.16666667f, 0.0f, -0.44444445f,
                         0.55555558f, -0.5f, 0.77777779f, 0.33333334f, -0.11111111f, -1.1666666f,
                         1.0f, -0.16666667f, -1.3333334f, 0.5f},
                        {}});
}

// Windows that tile the image (window = stride = 2) but for the last row and column, which
// ceil_mode adds half outside: 5x7 gives 3x4. Max pooling may not take the whole-plane path.
TEST(PoolKernel, CeilModeMatchesTorchForTilingWindows) {
  const PoolParams p = params(2, 2, 2, 0, 0, true);
  expect_matches_torch({{p, true, 5, 7},
                        {4, 5, 6, -3, 5, 6, 3, 4, 2, 3, 4, -2},
                        {0, 0, 0, 0, 0, 0, 4, 1, 0, 2, 0, 3, 0, 0,  0, 0,  0, 0,
                         7, 0, 8, 0, 5, 0, 6, 0, 0, 0, 0, 9, 0, 10, 0, 11, 12}});
  expect_matches_torch(
      {{p, false, 5, 7},
       {-0.75f, 0.25f, 1.25f, -4.5f, -0.25f, 0.75f, -1.5f, 2.5f, -1.5f, -0.5f, 0.5f, -2.0f},
       {0.25f, 0.25f, 0.5f,  0.5f,  0.75f, 0.75f, 2.0f,  0.25f, 0.25f, 0.5f,  0.5f,  0.75f,
        0.75f, 2.0f,  1.25f, 1.25f, 1.5f,  1.5f,  1.75f, 1.75f, 4.0f,  1.25f, 1.25f, 1.5f,
        1.5f,  1.75f, 1.75f, 4.0f,  4.5f,  4.5f,  5.0f,  5.0f,  5.5f,  5.5f,  12.0f}});
}

// The elements of slice `s` (dense, in its order) out of `whole`, the dense storage of `box`.
std::vector<float> gather(const std::vector<float>& whole, const Box4& box, const Slice& s) {
  std::vector<float> part(s.size());
  for_each_run(s, [&](int64_t n, int64_t c, int64_t y, int64_t x0, int64_t x1, int64_t off) {
    for (int64_t x = x0; x < x1; ++x) part[off + x - x0] = whole[box.offset(n, c, y, x)];
  });
  return part;
}

// Adds `part`, the dense storage of slice `s`, into `whole`, the dense storage of `box`.
void scatter_add(const std::vector<float>& part, const Slice& s, std::vector<float>& whole,
                 const Box4& box) {
  for_each_run(s, [&](int64_t n, int64_t c, int64_t y, int64_t x0, int64_t x1, int64_t off) {
    for (int64_t x = x0; x < x1; ++x) whole[box.offset(n, c, y, x)] += part[off + x - x0];
  });
}

// Pieces of an output box as ranks hold them: blocks of rows x blocks of columns of every plane,
// and flat slices of the whole box.
std::vector<std::vector<Slice>> cuts_of(const Box4& out) {
  std::vector<std::vector<Slice>> cuts;
  for (int64_t parts : {2, 3, 5}) {
    std::vector<Slice> boxes, flats;
    for (int64_t i = 0; i < parts; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        Box4 b = out;
        b.r[2] = balanced_block(out.extent(2), parts, i);
        b.r[3] = balanced_block(out.extent(3), 2, j);
        boxes.push_back(Slice::whole(b));
      }
      flats.push_back({out, balanced_block(out.volume(), parts, i)});
    }
    cuts.push_back(boxes);
    cuts.push_back(flats);
  }
  return cuts;
}

// Each piece of the output pools from its own input region (gathered from the whole input, as a
// rank receives it), which lies within the image even where a ceil_mode window runs past it, and
// gives the whole output's elements; the pieces' region gradients added up give the whole input's
// gradient.
TEST(PoolKernel, PiecesPoolAsTheWhole) {
  struct Geometry {
    PoolParams p;
    int64_t H, W;
  };
  const std::vector<Geometry> geometries = {
      {params(3, 2, 2, 1, 0, true), 6, 7},  {params(3, 3, 2, 0, 0, true), 8, 9},
      {params(2, 2, 2, 0, 0, true), 5, 7},  {params(2, 2, 2, 0, 0, true), 6, 8},
      {params(3, 3, 2, 1, 1, true), 9, 10}, {params(2, 2, 3, 1, 1, true), 8, 7},
      {params(5, 3, 3, 2, 1, true), 11, 6}, {params(3, 3, 2, 1, 1, false), 9, 10}};
  for (const Geometry& geo : geometries) {
    for (bool max : {true, false}) {
      const PoolGeometry g{geo.p, max, geo.H, geo.W};
      SCOPED_TRACE(testing::Message()
                   << geo.H << "x" << geo.W << " window " << geo.p.window_h << "x" << geo.p.window_w
                   << " stride " << geo.p.stride_h << " pad " << geo.p.pad_h << "x" << geo.p.pad_w
                   << " ceil " << geo.p.ceil_mode << (max ? " max" : " avg"));
      const Box4 in_box = image_box(2, 3, geo.H, geo.W);
      const Box4 out_box = image_box(2, 3, geo.p.out_h(geo.H), geo.p.out_w(geo.W));
      std::vector<float> x(in_box.volume()), dout(out_box.volume());
      for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.7f * static_cast<float>(i) + 0.3f);
      for (size_t i = 0; i < dout.size(); ++i) dout[i] = 0.5f + 0.25f * static_cast<float>(i % 5);
      std::vector<float> whole(out_box.volume()), whole_din(in_box.volume(), 0.0f);
      std::vector<int32_t> whole_argmax(out_box.volume());
      const Slice all = Slice::whole(out_box);
      pool_forward(g, in_box, x.data(), all, whole.data(), whole_argmax.data());
      pool_backward(g, in_box, all, dout.data(), whole_argmax.data(), whole_din.data());
      for (const std::vector<Slice>& cut : cuts_of(out_box)) {
        std::vector<float> din(in_box.volume(), 0.0f);
        for (const Slice& piece : cut) {
          if (piece.empty()) continue;
          const Box4 region = pool_input_region(g, piece);
          ASSERT_TRUE(region.r[2].begin >= 0 && region.r[2].end <= geo.H);
          ASSERT_TRUE(region.r[3].begin >= 0 && region.r[3].end <= geo.W);
          const Slice whole_region = Slice::whole(region);
          const std::vector<float> rx = gather(x, in_box, whole_region);
          const std::vector<float> piece_dout = gather(dout, out_box, piece);
          std::vector<float> out(piece.size()), rdin(region.volume(), 0.0f);
          std::vector<int32_t> argmax(piece.size());
          pool_forward(g, region, rx.data(), piece, out.data(), argmax.data());
          pool_backward(g, region, piece, piece_dout.data(), argmax.data(), rdin.data());
          EXPECT_EQ(out, gather(whole, out_box, piece));
          scatter_add(rdin, whole_region, din, in_box);
        }
        for (size_t i = 0; i < din.size(); ++i) EXPECT_NEAR(din[i], whole_din[i], 1e-5) << i;
      }
    }
  }
}

}  // namespace
}  // namespace convgrid
