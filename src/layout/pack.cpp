// Run-wise copies between packed messages and dense storage.
#include "layout/pack.hpp"

#include <algorithm>

namespace convgrid {

int64_t pack_box(const Slice& region, const ReadPixels* read, const Box4& src_box,
                 const float* src, float* out) {
  int64_t n = 0;
  for_each_read_run(region, read, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t) {
    const float* p = src + src_box.offset(a, b, y, x0);
    std::copy(p, p + (x1 - x0), out + n);
    n += x1 - x0;
  });
  return n;
}

int64_t pack_slice(const Slice& region, const ReadPixels* read, const float* src, float* out) {
  int64_t n = 0;
  for_each_read_run(region, read, [&](int64_t, int64_t, int64_t, int64_t x0, int64_t x1, int64_t off) {
    std::copy(src + off, src + off + (x1 - x0), out + n);
    n += x1 - x0;
  });
  return n;
}

int64_t unpack_box(const Slice& region, const ReadPixels* read, const float* in,
                   const Box4& dst_box, float* dst, bool add) {
  int64_t n = 0;
  for_each_read_run(region, read, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t) {
    float* p = dst + dst_box.offset(a, b, y, x0);
    if (add) {
      for (int64_t i = 0; i < x1 - x0; ++i) p[i] += in[n + i];
    } else {
      std::copy(in + n, in + n + (x1 - x0), p);
    }
    n += x1 - x0;
  });
  return n;
}

int64_t unpack_slice(const Slice& region, const ReadPixels* read, const float* in, float* dst) {
  int64_t n = 0;
  for_each_read_run(region, read, [&](int64_t, int64_t, int64_t, int64_t x0, int64_t x1, int64_t off) {
    std::copy(in + n, in + n + (x1 - x0), dst + off);
    n += x1 - x0;
  });
  return n;
}

}  // namespace convgrid

namespace convgrid {

void copy_box(const Slice& region, const ReadPixels* read, const Box4& src_box, const float* src,
              const Box4& dst_box, float* dst) {
  for_each_read_run(region, read, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t) {
    const float* p = src + src_box.offset(a, b, y, x0);
    std::copy(p, p + (x1 - x0), dst + dst_box.offset(a, b, y, x0));
  });
}

}  // namespace convgrid
