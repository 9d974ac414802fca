// Packing a region of a tensor into a contiguous message and back, keeping only the pixels
// some output reads (when a ReadPixels filter is given). Pure; no MPI.
//
// Two kinds of dense storage take part: a box buffer (a Box4 stored row-major, such as a
// gathered block or the haloed input of a rank) and slice storage (a rank's at-rest Slice).
#pragma once

#include <cstdint>

#include "layout/box.hpp"
#include "layout/read_pixels.hpp"

namespace convgrid {

// Calls f(a, b, y, x0, x1, slice_offset) for each run of the region's read pixels along x.
template <class F>
void for_each_read_run(const Slice& region, const ReadPixels* read, F&& f) {
  for_each_run(region, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t off) {
    if (read == nullptr) {
      f(a, b, y, x0, x1, off);
      return;
    }
    if (!read->row(y)) return;
    int64_t x = x0;
    while (x < x1) {
      while (x < x1 && !read->col(x)) ++x;
      int64_t e = x;
      while (e < x1 && read->col(e)) ++e;
      if (e > x) f(a, b, y, x, e, off + (x - x0));
      x = e;
    }
  });
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
