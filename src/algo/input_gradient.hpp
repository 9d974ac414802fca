// The end of the backward-data pass shared by the grid algorithm and its streamed form: the
// input gradient a rank computed on its needed input (dIn~, haloed) becomes its at-rest dIn slice.
//   dIn~[owned block] := own part + reverse halo (point to point from the ranks that read it)
//   dIn[n,c | k-slice] := reduce-scatter of the owned block over k-fibre (read pixels only)
#pragma once

#include <vector>

#include "comm/exchange.hpp"
#include "comm/traffic.hpp"
#include "convgrid/memory.hpp"
#include "grid/process_grid.hpp"
#include "layout/layer_layout.hpp"

namespace convgrid {

// Buffers kept between calls (grown on first use).
struct InputGradientBuffers {
  Buffer block, send, recv;
  std::vector<SendMessage> sends;
  std::vector<RecvMessage> recvs;
};

// `needed` holds dIn~ on layout.in_needed(g); writes the rank's at-rest dIn slice to `din`.
void reduce_input_gradient(const LayerLayout& layout, const ProcessGrid& grid, const float* needed,
                           float* din, InputGradientBuffers& buffers, TrafficCounter& traffic);

}  // namespace convgrid
