// Max and average pooling on one rank's part of an activation (SPEC section 8; conventions of
// nn/network.hpp: out = floor((H + 2*pad - window) / stride) + 1, or PyTorch's ceil_mode; max
// pads with -inf, average divides by the window clipped to the padded input, padding counting as
// 0: the whole window but where ceil_mode lets the last window run past the padded input's end).
//
// A rank computes the pooled elements of its output Slice from a dense input region (a box of
// the unpooled tensor that covers every window of that slice: pool_input_region); the region is
// gathered from the input's holders first, halos included (train/box_exchange.hpp). Backward adds
// each output gradient into the input region (to the window's maximum, or spread evenly), and the
// region's gradient goes back to the holders, where overlapping windows sum.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "layout/box.hpp"
#include "model/redistribution.hpp"
#include "nn/network.hpp"

namespace convgrid {

struct PoolGeometry {
  PoolParams params;
  bool max = true;      // max pooling, else average
  int64_t H = 0, W = 0;  // the input's extents (rows and columns of the unpooled tensor)
};

// The input rows and columns that the windows of output box `out` read, over the same samples
// and channels, clipped to the image (a ceil_mode window that runs past the end reads only the
// rows and columns that exist). An empty box for an empty output.
Box4 pool_input_box(const PoolGeometry& g, const Box4& out);

// The smallest box containing the input of every element of `out` (empty slice: empty box).
Box4 pool_input_region(const PoolGeometry& g, const Slice& out);

// Every rank's input region for its slice of `pooled` (the pooled placement), as one SliceSum: a
// region's rows are those its block of output rows reads, its columns likewise, its samples and
// channels the block's, so the regions are the blocks with rows and columns mapped one range at a
// time (an empty range stays empty, as an empty block's region is empty). Nullopt when some
// slice is a flat part of a block (its region is a hull, no product).
std::optional<SliceSum> pool_input_regions(const PoolGeometry& g, const Placement& pooled);

// out[i] for every element of the slice, from `in`, the dense storage of `region`. With max
// pooling, argmax[i] is the offset in the region of the element chosen (ties: the first in
// row-major window order).
void pool_forward(const PoolGeometry& g, const Box4& region, const float* in, const Slice& out_slice,
                  float* out, int32_t* argmax);

// Adds the input gradient of every output element into din (dense storage of `region`).
void pool_backward(const PoolGeometry& g, const Box4& region, const Slice& out_slice,
                   const float* dout, const int32_t* argmax, float* din);

}  // namespace convgrid
