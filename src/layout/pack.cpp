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

namespace convgrid {
namespace {

// Calls f(a, b, y, x0, x1, slice_offset) for the read runs of `region` clipped to `part`.
template <class F>
void for_each_part_run(const Slice& region, const ReadPixels* read, const Box4& part, F&& f) {
  for_each_read_run(region, read, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t off) {
    if (!part.r[0].contains(a) || !part.r[1].contains(b) || !part.r[2].contains(y)) return;
    const Range xs = Range{x0, x1}.intersect(part.r[3]);
    if (!xs.empty()) f(a, b, y, xs.begin, xs.end, off + (xs.begin - x0));
  });
}

}  // namespace

int64_t count_part(const Slice& region, const ReadPixels* read, const Box4& part) {
  int64_t n = 0;
  for_each_box(region, [&](const Box4& b) {
    const Box4 c = b.intersect(part);
    n += read == nullptr ? c.volume()
                         : c.extent(0) * c.extent(1) * read->rows_in(c.r[2]) * read->cols_in(c.r[3]);
  });
  return n;
}

int64_t pack_part(const Slice& region, const ReadPixels* read, const Box4& part, const float* src,
                  float* out) {
  int64_t n = 0;
  for_each_part_run(region, read, part, [&](int64_t, int64_t, int64_t, int64_t x0, int64_t x1, int64_t off) {
    std::copy(src + off, src + off + (x1 - x0), out + n);
    n += x1 - x0;
  });
  return n;
}

int64_t unpack_part(const Slice& region, const ReadPixels* read, const Box4& part, const float* in,
                    const Box4& dst_box, float* dst, bool add) {
  int64_t n = 0;
  for_each_part_run(region, read, part, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t) {
    float* d = dst + dst_box.offset(a, b, y, x0);
    if (add) {
      for (int64_t i = 0; i < x1 - x0; ++i) d[i] += in[n + i];
    } else {
      std::copy(in + n, in + n + (x1 - x0), d);
    }
    n += x1 - x0;
  });
  return n;
}

int64_t copy_part(const Slice& region, const ReadPixels* read, const Box4& part, const float* src,
                  const Box4& dst_box, float* dst) {
  int64_t n = 0;
  for_each_part_run(region, read, part, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t off) {
    std::copy(src + off, src + off + (x1 - x0), dst + dst_box.offset(a, b, y, x0));
    n += x1 - x0;
  });
  return n;
}

void add_box_into_slice(const Slice& region, const Box4& part, const Box4& src_box, const float* src,
                        float* dst) {
  for_each_part_run(region, nullptr, part, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t off) {
    const float* from = src + src_box.offset(a, b, y, x0);
    for (int64_t i = 0; i < x1 - x0; ++i) dst[off + i] += from[i];
  });
}

int64_t unpack_part_to_slice(const Slice& region, const ReadPixels* read, const Box4& part,
                             const float* in, float* dst, bool add) {
  int64_t n = 0;
  for_each_part_run(region, read, part, [&](int64_t, int64_t, int64_t, int64_t x0, int64_t x1, int64_t off) {
    if (add) {
      for (int64_t i = 0; i < x1 - x0; ++i) dst[off + i] += in[n + i];
    } else {
      std::copy(in + n, in + n + (x1 - x0), dst + off);
    }
    n += x1 - x0;
  });
  return n;
}

}  // namespace convgrid
