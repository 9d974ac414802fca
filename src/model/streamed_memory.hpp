// Per-rank memory of the streamed grid algorithm (algo/streamed_conv.hpp) after running `passes`
// with `panels` panels, in bytes: the at-rest slices of the tensors the passes read and write,
// plus every buffer StreamedConv keeps, each at the largest size any panel of any pass asked of
// it (buffers grow and are reused, never shrunk), plus what its local engines keep (one per
// shape of a chunk of a panel, each with the passes that used it: engine_bytes). No MPI.
#pragma once

#include <cstdint>
#include <vector>

#include "convgrid/local_conv.hpp"
#include "layout/layer_layout.hpp"

namespace convgrid {

int64_t streamed_memory_bytes(const LayerLayout& layout, GridCoord g, const std::vector<Pass>& passes,
                              int64_t panels, int64_t pieces, Backend engine);

}  // namespace convgrid
