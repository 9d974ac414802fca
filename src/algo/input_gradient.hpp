// The end of the backward-data pass shared by the grid algorithm and its streamed form: the
// input gradient a rank computed on its needed input (dIn~, haloed) becomes its at-rest dIn slice.
//   dIn~[owned block] := own part + reverse halo (point to point from the ranks that read it)
//   dIn[n,c | k-slice] := reduce-scatter of the owned block over the input fibre (read pixels
//                         only; the k-fibre, or with groups its ranks of one group)
#pragma once

#include <vector>

#include "comm/exchange.hpp"
#include "comm/traffic.hpp"
#include "convgrid/memory.hpp"
#include "grid/process_grid.hpp"
#include "layout/layer_layout.hpp"

namespace convgrid {

// Buffers kept between calls (grown on first use), by reference so that a caller can lend ones it
// does not need at this point: `block` (the owned block; untouched when the needed input is the
// owned block), `send` (max(halo received, read pixels of the input fibre's slices)) and `recv`
// (max(halo sent, read pixels of the own slice)).
struct InputGradientBuffers {
  Buffer& block;
  Buffer& send;
  Buffer& recv;
  std::vector<SendMessage>& sends;
  std::vector<RecvMessage>& recvs;
};

// `needed` holds dIn~ on layout.in_needed(g) and is consumed (used as the owned block when the two
// are the same box); writes the rank's at-rest dIn slice to `din`.
// `in_fibre` is grid.k_fibre_part(layout.in_fibre_size()).
void reduce_input_gradient(const LayerLayout& layout, const ProcessGrid& grid, const Communicator& in_fibre,
                           float* needed, float* din, const InputGradientBuffers& buffers, TrafficCounter& traffic);

}  // namespace convgrid
