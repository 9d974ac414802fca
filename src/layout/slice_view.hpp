// A part of a rank's slice read where it lies instead of copied out: a gather over a fibre of one
// rank needs no staging when the slice is its whole block and the part (a panel) differs from the
// block in dimensions 0 and 1 only (a range of samples or filters, a range of channels). Its
// elements then form a dense box in the slice whose dimension-0 entries are `lead` floats apart.
// Pure; no MPI.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "layout/box.hpp"

namespace convgrid {

struct SliceView {
  int64_t offset = 0;  // of the part's first element in the slice
  int64_t lead = 0;    // between consecutive entries of dimension 0; 0 when the part is dense
};

inline std::optional<SliceView> view_in_slice(const Slice& slice, const Box4& part) {
  const Box4& b = slice.box;
  if (slice.flat.begin != 0 || slice.flat.end != b.volume() || part.empty()) return std::nullopt;
  if (!(part.r[2] == b.r[2]) || !(part.r[3] == b.r[3])) return std::nullopt;
  if (part.intersect(b) != part) return std::nullopt;
  SliceView v;
  v.offset = b.offset(part.r[0].begin, part.r[1].begin, part.r[2].begin, part.r[3].begin);
  if (!(part.r[1] == b.r[1])) v.lead = b.extent(1) * b.extent(2) * b.extent(3);
  return v;
}

// The view of a streamed operand's panel when it is not gathered at all: its fibre has one rank
// and the panel lies in that rank's slice as above. A strided view (lead != 0) only when
// `strided_ok` (the local engine reads strided arrays, and no halo code reads the panel as a
// dense box).
inline std::optional<SliceView> panel_in_place(const std::vector<Slice>& slices, const Box4& part,
                                               bool strided_ok) {
  if (slices.size() != 1) return std::nullopt;
  const std::optional<SliceView> v = view_in_slice(slices.front(), part);
  if (!v || (v->lead != 0 && !strided_ok)) return std::nullopt;
  return v;
}

}  // namespace convgrid
