// Boxes and slices of 4-D tensors, the unit every distribution is described in. Pure; no MPI.
//
// A Box4 is a rectangular block of a 4-D tensor in global coordinates: for activations the
// dimensions are (n, channel, row, column) of NCHW, for weights (k, c, r, s) of KCRS.
// A Slice is the part of a box whose index in the box's own row-major flattening lies in `flat`:
// a sub-box of whole channels has flat = [0, volume), a flat slice is a contiguous range.
// A rank's at-rest share of a tensor is one Slice, stored densely in flattening order.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "layout/range.hpp"

namespace convgrid {

struct Box4 {
  std::array<Range, 4> r;

  int64_t extent(int d) const { return r[d].size(); }
  int64_t volume() const { return extent(0) * extent(1) * extent(2) * extent(3); }
  bool empty() const { return volume() == 0; }
  Box4 intersect(const Box4& o) const {
    return {{r[0].intersect(o.r[0]), r[1].intersect(o.r[1]), r[2].intersect(o.r[2]),
             r[3].intersect(o.r[3])}};
  }
  // Offset of global coordinate (a,b,c,d) in the box's dense row-major storage.
  int64_t offset(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return ((((a - r[0].begin) * extent(1)) + (b - r[1].begin)) * extent(2) + (c - r[2].begin)) *
               extent(3) +
           (d - r[3].begin);
  }
  // The box with dimension `dim` cut to `range`.
  Box4 clipped(int dim, Range range) const {
    Box4 b = *this;
    b.r[dim] = b.r[dim].intersect(range);
    return b;
  }
  bool operator==(const Box4&) const = default;
};

struct Slice {
  Box4 box;
  Range flat;

  static Slice whole(const Box4& b) { return {b, {0, b.volume()}}; }
  int64_t size() const { return flat.size(); }
  bool empty() const { return flat.empty(); }
};

// Slice j of `parts` of a block: along dimension 1 (whole channel planes, balanced) when the
// block has at least `parts` channels, otherwise a balanced range of its flattened index.
inline Slice split_block(const Box4& block, int64_t parts, int64_t j) {
  if (block.extent(1) >= parts) {
    Box4 sub = block;
    Range ch = balanced_block(block.extent(1), parts, j);
    sub.r[1] = ch.shifted(block.r[1].begin);
    return Slice::whole(sub);
  }
  return {block, balanced_block(block.volume(), parts, j)};
}

namespace detail {
// Calls f on the sub-boxes of `box` whose elements have flat index (in the row-major flattening
// of dimensions d..3; dimensions before d have extent 1) in [lo, hi): at each dimension a
// partial head, whole middle slabs and a partial tail.
template <class F>
void for_each_flat_box(const Box4& box, int d, int64_t lo, int64_t hi, F& f) {
  if (lo >= hi) return;
  int64_t inner = 1;
  for (int i = d + 1; i < 4; ++i) inner *= box.extent(i);
  if (inner == 0) return;
  if (lo == 0 && hi == box.extent(d) * inner) {
    f(box);
    return;
  }
  const int64_t base = box.r[d].begin;
  const auto at = [&](int64_t from, int64_t to) {
    Box4 sub = box;
    sub.r[d] = {base + from, base + to};
    return sub;
  };
  if (d == 3) {  // the last dimension: the range itself
    f(at(lo, hi));
    return;
  }
  const int64_t first = lo / inner, last = (hi - 1) / inner;
  if (first == last) {
    for_each_flat_box(at(first, first + 1), d + 1, lo - first * inner, hi - first * inner, f);
    return;
  }
  const bool head = lo % inner != 0, tail = hi % inner != 0;
  if (head) for_each_flat_box(at(first, first + 1), d + 1, lo % inner, inner, f);
  const int64_t full_begin = head ? first + 1 : first, full_end = tail ? last : last + 1;
  if (full_begin < full_end) f(at(full_begin, full_end));
  if (tail) for_each_flat_box(at(last, last + 1), d + 1, 0, hi - last * inner, f);
}
}  // namespace detail

// Calls f(Box4) for each of the at most 7 disjoint sub-boxes that make up a slice, in
// flattening order (one, the box itself, for a slice of whole channels).
template <class F>
void for_each_box(const Slice& s, F&& f) {
  if (s.empty()) return;
  detail::for_each_flat_box(s.box, 0, s.flat.begin, s.flat.end, f);
}

// The sub-boxes of for_each_box, as a list.
inline std::vector<Box4> slice_boxes(const Slice& s) {
  std::vector<Box4> out;
  for_each_box(s, [&](const Box4& b) { out.push_back(b); });
  return out;
}

// Calls f(a, b, c, d_begin, d_end, offset) for every maximal run of the slice along the last
// dimension, in flattening order; `offset` is the run's position within the slice (0-based).
// Each row lies in one sub-box of for_each_box, whose elements are contiguous in the slice.
template <class F>
void for_each_run(const Slice& s, F&& f) {
  int64_t base = 0;
  for_each_box(s, [&](const Box4& b) {
    const int64_t w = b.extent(3);
    int64_t off = base;
    for (int64_t a = b.r[0].begin; a < b.r[0].end; ++a) {
      for (int64_t c = b.r[1].begin; c < b.r[1].end; ++c) {
        for (int64_t y = b.r[2].begin; y < b.r[2].end; ++y) {
          f(a, c, y, b.r[3].begin, b.r[3].end, off);
          off += w;
        }
      }
    }
    base += b.volume();
  });
}

// Calls f(a, b, offset, length) for every maximal run of the slice whose elements share their
// first two coordinates (a sample and a channel of an activation), in flattening order; `offset`
// is the run's position within the slice.
template <class F>
void for_each_plane_run(const Slice& s, F&& f) {
  if (s.empty()) return;
  const Box4& b = s.box;
  const int64_t plane = b.extent(2) * b.extent(3);
  int64_t i = s.flat.begin;
  while (i < s.flat.end) {
    const int64_t p = i / plane;
    const int64_t len = std::min(plane - i % plane, s.flat.end - i);
    f(p / b.extent(1) + b.r[0].begin, p % b.extent(1) + b.r[1].begin, i - s.flat.begin, len);
    i += len;
  }
}

}  // namespace convgrid
