// Packing a region of a tensor into a contiguous message and back, keeping only the pixels
// some output reads (when a ReadPixels filter is given). Pure; no MPI.
//
// Two kinds of dense storage take part: a box buffer (a Box4 stored row-major, such as a
// gathered block or the haloed input of a rank) and slice storage (a rank's at-rest Slice).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "layout/box.hpp"
#include "layout/read_pixels.hpp"

namespace convgrid {

// Calls f(a, b, y, x0, x1, slice_offset) for each run along x of the region's read pixels inside
// `part` (every pixel is read when `read` is null), in the slice's own order: the region's
// sub-boxes (each contiguous in the slice) clipped to the part, row by row.
template <class F>
void for_each_part_run(const Slice& region, const ReadPixels* read, const Box4& part, F&& f) {
  if (read != nullptr && read->all_read()) read = nullptr;
  std::vector<Range> cols;  // the read column runs of the current clipped box (when some are not)
  int64_t base = 0;
  for_each_box(region, [&](const Box4& b) {
    const Box4 c = b.intersect(part);
    const int64_t slab = b.volume();
    if (c.empty()) {
      base += slab;
      return;
    }
    // Every column read: one run per row, and no vector to fill.
    std::span<const Range> runs(&c.r[3], 1);
    if (read != nullptr) {
      cols.clear();
      for (int64_t x = c.r[3].begin; x < c.r[3].end;) {
        while (x < c.r[3].end && !read->col(x)) ++x;
        int64_t e = x;
        while (e < c.r[3].end && read->col(e)) ++e;
        if (e > x) cols.push_back({x, e});
        x = e;
      }
      runs = cols;
    }
    for (int64_t a = c.r[0].begin; a < c.r[0].end; ++a) {
      for (int64_t ch = c.r[1].begin; ch < c.r[1].end; ++ch) {
        for (int64_t y = c.r[2].begin; y < c.r[2].end; ++y) {
          if (read != nullptr && !read->row(y)) continue;
          for (const Range& x : runs) f(a, ch, y, x.begin, x.end, base + b.offset(a, ch, y, x.begin));
        }
      }
    }
    base += slab;
  });
}

// Calls f(a, b, y, x0, x1, slice_offset) for each run of the region's read pixels along x.
template <class F>
void for_each_read_run(const Slice& region, const ReadPixels* read, F&& f) {
  for_each_part_run(region, read, region.box, f);
}

// Region (read pixels only) from a box buffer into `out`; returns the count written.
int64_t pack_box(const Slice& region, const ReadPixels* read, const Box4& src_box,
                 const float* src, float* out);
// Region (read pixels only) from its own slice storage into `out`.
int64_t pack_slice(const Slice& region, const ReadPixels* read, const float* src, float* out);
// Packed values into a box buffer: written, or added when `add`.
int64_t unpack_box(const Slice& region, const ReadPixels* read, const float* in,
                   const Box4& dst_box, float* dst, bool add);
// Packed values into the region's own slice storage (unread positions are left untouched).
int64_t unpack_slice(const Slice& region, const ReadPixels* read, const float* in, float* dst);

}  // namespace convgrid

namespace convgrid {

// Region (read pixels only) from one box buffer into another.
void copy_box(const Slice& region, const ReadPixels* read, const Box4& src_box, const float* src,
              const Box4& dst_box, float* dst);

}  // namespace convgrid

namespace convgrid {

// The part of a slice inside a box (a panel of a streamed algorithm): its read pixels, in the
// slice's own order. count_part needs O(1) work (a slice is at most 7 boxes); pack_part reads the
// part from the slice's own storage, unpack_part writes (or adds) it into a box buffer.
int64_t count_part(const Slice& region, const ReadPixels* read, const Box4& part);
int64_t pack_part(const Slice& region, const ReadPixels* read, const Box4& part, const float* src,
                  float* out);
int64_t unpack_part(const Slice& region, const ReadPixels* read, const Box4& part, const float* in,
                    const Box4& dst_box, float* dst, bool add);
// The part straight from the slice's own storage into a box buffer (no packing: a gather over a
// fibre of one rank).
int64_t copy_part(const Slice& region, const ReadPixels* read, const Box4& part, const float* src,
                  const Box4& dst_box, float* dst);

// Adds the values of a box buffer (src_box, src) at the part's elements into the slice's own
// storage (all elements, no read filter): accumulating a block computed in pieces directly in
// the layout a collective sends.
void add_box_into_slice(const Slice& region, const Box4& part, const Box4& src_box, const float* src,
                        float* dst);

// The reverse of pack_part: packed values of the part back into the slice's own storage
// (written, or added when `add`).
int64_t unpack_part_to_slice(const Slice& region, const ReadPixels* read, const Box4& part,
                             const float* in, float* dst, bool add);

}  // namespace convgrid
