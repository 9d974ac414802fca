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

Range covered(Range out, int64_t stride, int64_t pad, int64_t size, int64_t extent) {
  if (out.empty()) return {0, 0};
  return Range{window(out.begin, stride, pad, size, extent).begin,
               window(out.end - 1, stride, pad, size, extent).end};
}

// Calls f(output offset in the slice, n, c, row window, column window) for every output element.
template <class F>
void for_each_output(const PoolGeometry& g, const Slice& out_slice, F&& f) {
  const PoolParams& p = g.params;
  for_each_run(out_slice, [&](int64_t n, int64_t c, int64_t oy, int64_t x0, int64_t x1, int64_t off) {
    const Range rows = window(oy, p.stride_h, p.pad_h, p.window_h, g.H);
    for (int64_t ox = x0; ox < x1; ++ox) {
      f(off + (ox - x0), n, c, rows, window(ox, p.stride_w, p.pad_w, p.window_w, g.W));
    }
  });
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

void pool_forward(const PoolGeometry& g, const Box4& region, const float* in, const Slice& out_slice,
                  float* out, int32_t* argmax) {
  const float area = static_cast<float>(g.params.window_h * g.params.window_w);
  for_each_output(g, out_slice, [&](int64_t i, int64_t n, int64_t c, Range rows, Range cols) {
    if (g.max) {
      float best = -std::numeric_limits<float>::infinity();
      int64_t at = region.offset(n, c, rows.begin, cols.begin);
      for (int64_t y = rows.begin; y < rows.end; ++y) {
        const int64_t row = region.offset(n, c, y, region.r[3].begin) - region.r[3].begin;
        for (int64_t x = cols.begin; x < cols.end; ++x) {
          const float v = in[row + x];
          if (v > best) {
            best = v;
            at = row + x;
          }
        }
      }
      out[i] = best;
      argmax[i] = static_cast<int32_t>(at);
    } else {
      float sum = 0;
      for (int64_t y = rows.begin; y < rows.end; ++y) {
        const int64_t row = region.offset(n, c, y, region.r[3].begin) - region.r[3].begin;
        for (int64_t x = cols.begin; x < cols.end; ++x) sum += in[row + x];
      }
      out[i] = sum / area;
    }
  });
}

void pool_backward(const PoolGeometry& g, const Box4& region, const Slice& out_slice,
                   const float* dout, const int32_t* argmax, float* din) {
  const float area = static_cast<float>(g.params.window_h * g.params.window_w);
  for_each_output(g, out_slice, [&](int64_t i, int64_t n, int64_t c, Range rows, Range cols) {
    if (g.max) {
      din[argmax[i]] += dout[i];
      return;
    }
    const float share = dout[i] / area;
    for (int64_t y = rows.begin; y < rows.end; ++y) {
      const int64_t row = region.offset(n, c, y, region.r[3].begin) - region.r[3].begin;
      for (int64_t x = cols.begin; x < cols.end; ++x) din[row + x] += share;
    }
  });
}

}  // namespace convgrid
