// Pooling over a dense input region, one output run (consecutive columns) at a time.
#include "train/pool_kernel.hpp"

#include <algorithm>
#include <limits>

namespace convgrid {
namespace {

// Window rows [begin, end) of output row o, clipped to [0, extent).
Range window(int64_t o, int64_t stride, int64_t pad, int64_t size, int64_t extent) {
  const int64_t first = o * stride - pad;
  return Range{std::max<int64_t>(first, 0), std::min(first + size, extent)};
}

// How many rows of output row o's window lie within the padded input, [-pad, extent + pad):
// the whole window but where ceil_mode lets the last one run past the end.
int64_t counted(int64_t o, int64_t stride, int64_t pad, int64_t size, int64_t extent) {
  const int64_t first = o * stride - pad;
  return std::min(first + size, extent + pad) - first;
}

Range covered(Range out, int64_t stride, int64_t pad, int64_t size, int64_t extent) {
  if (out.empty()) return {0, 0};
  return Range{window(out.begin, stride, pad, size, extent).begin,
               window(out.end - 1, stride, pad, size, extent).end};
}

// Calls f(output offset in the slice, offset of the window's first row in the region, rows of
// the window, first and last column of the window relative to the region, the window's elements
// within the padded input: average pooling's divisor) for every output.
template <class F>
void for_each_output(const PoolGeometry& g, const Box4& region, const Slice& out_slice, F&& f) {
  const PoolParams& p = g.params;
  const int64_t x_origin = region.r[3].begin;
  for_each_run(out_slice, [&](int64_t n, int64_t c, int64_t oy, int64_t x0, int64_t x1, int64_t off) {
    const Range rows = window(oy, p.stride_h, p.pad_h, p.window_h, g.H);
    const int64_t row0 = region.offset(n, c, rows.begin, x_origin);
    const int64_t counted_rows = counted(oy, p.stride_h, p.pad_h, p.window_h, g.H);
    for (int64_t ox = x0; ox < x1; ++ox) {
      const Range cols = window(ox, p.stride_w, p.pad_w, p.window_w, g.W);
      const int64_t area = counted_rows * counted(ox, p.stride_w, p.pad_w, p.window_w, g.W);
      f(off + (ox - x0), row0, rows.size(), cols.begin - x_origin, cols.end - x_origin, area);
    }
  });
}

// The largest of a rows x cols window whose first element is in[first] (rows `stride` apart),
// and where it is (the first such, row by row), branch-free: the comparisons are unpredictable.
inline void max_window(const float* in, int64_t first, int64_t stride, int64_t rows, int64_t cols,
                       float& best_out, int32_t& at_out) {
  int64_t at = first;
  float best = -std::numeric_limits<float>::infinity();
  for (int64_t y = 0; y < rows; ++y) {
    const int64_t row = first + y * stride;
    for (int64_t x = 0; x < cols; ++x) {
      const float v = in[row + x];
      const bool larger = v > best;
      best = larger ? v : best;
      at = larger ? row + x : at;
    }
  }
  best_out = best;
  at_out = static_cast<int32_t>(at);
}

template <int64_t Rows, int64_t Cols>
void max_window(const float* in, int64_t first, int64_t stride, float& best, int32_t& at) {
  max_window(in, first, stride, Rows, Cols, best, at);
}

}  // namespace

Box4 pool_input_box(const PoolGeometry& g, const Box4& out) {
  if (out.empty()) return Box4{};
  const PoolParams& p = g.params;
  return Box4{{out.r[0], out.r[1], covered(out.r[2], p.stride_h, p.pad_h, p.window_h, g.H),
               covered(out.r[3], p.stride_w, p.pad_w, p.window_w, g.W)}};
}

Box4 pool_input_region(const PoolGeometry& g, const Slice& out) {
  Box4 hull{};
  bool first = true;
  for_each_box(out, [&](const Box4& b) {
    const Box4 in = pool_input_box(g, b);
    if (first) {
      hull = in;
      first = false;
      return;
    }
    for (int d = 0; d < 4; ++d) {
      hull.r[d] = Range{std::min(hull.r[d].begin, in.r[d].begin), std::max(hull.r[d].end, in.r[d].end)};
    }
  });
  return hull;
}

std::optional<SliceSum> pool_input_regions(const PoolGeometry& g, const Placement& pooled) {
  const GridDims& d = pooled.dims();
  auto ranges = pooled.slice_ranges_between(GridCoord{}, GridCoord{d.Pn - 1, d.Pk - 1, d.Pc - 1, d.Ph - 1, d.Pw - 1});
  if (!ranges) return std::nullopt;
  const PoolParams& p = g.params;
  for (Range& r : (*ranges)[2]) r = covered(r, p.stride_h, p.pad_h, p.window_h, g.H);
  for (Range& r : (*ranges)[3]) r = covered(r, p.stride_w, p.pad_w, p.window_w, g.W);
  return SliceSum(std::move(*ranges));
}

// Max pooling with windows that tile the image (window = stride, no padding, none running past
// the end) over whole output planes read from whole input planes: plane by plane, with no
// per-element window arithmetic.
bool tiled_max(const PoolGeometry& g, const Box4& region, const Slice& out_slice, int64_t Ho, int64_t Wo) {
  const PoolParams& p = g.params;
  const Box4& b = out_slice.box;
  return g.max && p.pad_h == 0 && p.pad_w == 0 && p.window_h == p.stride_h && p.window_w == p.stride_w &&
         Ho * p.stride_h <= g.H && Wo * p.stride_w <= g.W &&
         out_slice.flat.begin == 0 && out_slice.flat.end == b.volume() && b.r[2] == Range{0, Ho} &&
         b.r[3] == Range{0, Wo} && region.r[2] == Range{0, g.H} && region.r[3] == Range{0, g.W};
}

void pool_forward(const PoolGeometry& g, const Box4& region, const float* in, const Slice& out_slice,
                  float* out, int32_t* argmax) {
  const PoolParams& p = g.params;
  const int64_t Ho = p.out_h(g.H), Wo = p.out_w(g.W);
  if (!out_slice.empty() && tiled_max(g, region, out_slice, Ho, Wo)) {
    const Box4& b = out_slice.box;
    int64_t i = 0;
    for (int64_t n = b.r[0].begin; n < b.r[0].end; ++n) {
      for (int64_t c = b.r[1].begin; c < b.r[1].end; ++c) {
        const int64_t plane = region.offset(n, c, 0, 0);
        for (int64_t oy = 0; oy < Ho; ++oy) {
          for (int64_t ox = 0; ox < Wo; ++ox, ++i) {
            const int64_t first = plane + oy * p.stride_h * g.W + ox * p.stride_w;
            int64_t at = first;
            float best = in[first];
            for (int64_t y = 0; y < p.window_h; ++y) {
              for (int64_t x = 0; x < p.window_w; ++x) {
                const int64_t k = first + y * g.W + x;
                const bool larger = in[k] > best;
                best = larger ? in[k] : best;
                at = larger ? k : at;
              }
            }
            out[i] = best;
            argmax[i] = static_cast<int32_t>(at);
          }
        }
      }
    }
    return;
  }
  const int64_t stride = region.extent(3);
  if (g.max) {
    for_each_output(g, region, out_slice,
                    [&](int64_t i, int64_t row0, int64_t rows, int64_t c0, int64_t c1, int64_t) {
      // Whole 3x3 and 2x2 windows (ResNet's and VGG's) with their sizes known to the compiler.
      if (rows == 3 && c1 - c0 == 3) return max_window<3, 3>(in, row0 + c0, stride, out[i], argmax[i]);
      if (rows == 2 && c1 - c0 == 2) return max_window<2, 2>(in, row0 + c0, stride, out[i], argmax[i]);
      max_window(in, row0 + c0, stride, rows, c1 - c0, out[i], argmax[i]);
    });
    return;
  }
  for_each_output(g, region, out_slice,
                  [&](int64_t i, int64_t row0, int64_t rows, int64_t c0, int64_t c1, int64_t area) {
    float sum = 0;
    for (int64_t y = 0; y < rows; ++y) {
      const float* row = in + row0 + y * stride;
      for (int64_t x = c0; x < c1; ++x) sum += row[x];
    }
    out[i] = sum / static_cast<float>(area);
  });
}

void pool_backward(const PoolGeometry& g, const Box4& region, const Slice& out_slice,
                   const float* dout, const int32_t* argmax, float* din) {
  if (g.max) {
    for (int64_t i = 0; i < out_slice.size(); ++i) din[argmax[i]] += dout[i];
    return;
  }
  const int64_t stride = region.extent(3);
  for_each_output(g, region, out_slice,
                  [&](int64_t i, int64_t row0, int64_t rows, int64_t c0, int64_t c1, int64_t area) {
    const float share = dout[i] / static_cast<float>(area);
    for (int64_t y = 0; y < rows; ++y) {
      float* row = din + row0 + y * stride;
      for (int64_t x = c0; x < c1; ++x) row[x] += share;
    }
  });
}

}  // namespace convgrid
