// Per-rank memory of the grid algorithm (GridConv) for a sequence of passes: the at-rest slices
// of the tensors the passes read and write, plus every buffer GridConv keeps (gathered blocks,
// partial results, staging for packed messages), in bytes. The local engine's own copies in
// oneDNN's blocked layouts are not included. Pure; no MPI.
#pragma once

#include <cstdint>
#include <vector>

#include "convgrid/local_conv.hpp"
#include "layout/layer_layout.hpp"

namespace convgrid {

int64_t grid_memory_bytes(const LayerLayout& layout, GridCoord g, const std::vector<Pass>& passes);

}  // namespace convgrid
