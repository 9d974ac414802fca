// Marks the input rows (columns) read by some output row (column) and filter tap.
#include "layout/read_pixels.hpp"

#include <algorithm>

namespace convgrid {
namespace {

std::vector<char> mark_read(int64_t in, int64_t out, int64_t taps, int64_t stride, int64_t dil,
                            int64_t pad) {
  std::vector<char> read(in, 0);
  for (int64_t h = 0; h < out; ++h) {
    for (int64_t r = 0; r < taps; ++r) {
      const int64_t y = h * stride + r * dil - pad;
      if (y >= 0 && y < in) read[y] = 1;
    }
  }
  return read;
}

std::vector<int64_t> prefix(const std::vector<char>& v) {
  std::vector<int64_t> p(v.size() + 1, 0);
  for (size_t i = 0; i < v.size(); ++i) p[i + 1] = p[i] + v[i];
  return p;
}

}  // namespace

ReadPixels::ReadPixels(const ConvShape& s)
    : row_read_(mark_read(s.H, s.Ho(), s.R, s.stride_h, s.dil_h, s.pad_top)),
      col_read_(mark_read(s.W, s.Wo(), s.S, s.stride_w, s.dil_w, s.pad_left)),
      row_prefix_(prefix(row_read_)),
      col_prefix_(prefix(col_read_)) {
  all_read_ = row_prefix_.back() == s.H && col_prefix_.back() == s.W;
}

}  // namespace convgrid
