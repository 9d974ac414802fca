// Per-rank memory of the grid algorithm (GridConv) for a sequence of passes: the at-rest slices
// of the tensors the passes read and write, plus every buffer GridConv keeps (gathered blocks,
// partial results, staging for packed messages), plus what its local engine keeps (its tensors in
// the layouts each pass prefers: convgrid/local_conv.hpp engine_bytes; none for the loop-nest
// reference), in bytes. No MPI.
#pragma once

#include <cstdint>
#include <vector>

#include "convgrid/local_conv.hpp"
#include "layout/layer_layout.hpp"

namespace convgrid {

int64_t grid_memory_bytes(const LayerLayout& layout, GridCoord g, const std::vector<Pass>& passes,
                          Backend engine);

}  // namespace convgrid
