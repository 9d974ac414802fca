// One rank's at-rest share of a distributed tensor, as a plain value a user can fill and read
// (convgrid/distributed_conv.hpp hands them out). Pure; no MPI.
//
// The share is the part of a 4-D box (global coordinates: (n, c, y, x) of an NCHW activation,
// (k, c, r, s) of KCRS weights) whose index in the box's own row-major flattening lies in
// [flat_begin, flat_end). The rank stores it densely in that order: local element i is the box
// element of flat index flat_begin + i. Most slices are whole boxes (flat range = the box).
//
// Example: box n [0,2) c [4,6) y [0,3) x [0,3) (volume 36), flat [9,27): local element 0 is the
// global (0, 5, 0, 0), element 17 is (1, 4, 2, 2).
#pragma once

#include <array>
#include <cstdint>

namespace convgrid {

struct TensorSlice {
  std::array<int64_t, 4> begin{};  // the box, [begin, end) along each dimension
  std::array<int64_t, 4> end{};
  int64_t flat_begin = 0, flat_end = 0;

  int64_t extent(int d) const { return end[d] - begin[d]; }
  int64_t size() const { return flat_end - flat_begin; }  // elements this rank holds
  // The global coordinates of local element i (0 <= i < size()).
  std::array<int64_t, 4> coord(int64_t i) const {
    int64_t f = flat_begin + i;
    std::array<int64_t, 4> c{};
    for (int d = 3; d >= 0; --d) {
      c[d] = begin[d] + f % extent(d);
      f /= extent(d);
    }
    return c;
  }
};

}  // namespace convgrid
