// The at-rest slices a rank's fibres hold (layout/layer_layout.hpp), member by member: what the
// rank's gathers collect and its reduce-scatters deliver. Pure; no MPI.
#pragma once

#include <cstdint>
#include <vector>

#include "layout/layer_layout.hpp"

namespace convgrid {

struct FibreSlices {
  FibreSlices(const LayerLayout& layout, GridCoord g);

  std::vector<Slice> in;         // In slices of g's input fibre (its k-fibre when G = 1), by pk
  std::vector<int64_t> in_read;  // their read pixels
  std::vector<Slice> out;        // Out slices of g's c-fibre, by pc
  std::vector<int64_t> out_size;
  std::vector<Slice> ker;        // Ker slices of g's nhw-fibre (flat ranges of the Ker block)
  std::vector<int64_t> ker_size;
};

}  // namespace convgrid
