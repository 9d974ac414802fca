// The element-wise parts of a layer on one rank's slice of an activation: ReLU, ReLU6, and the
// bias of a convolution or fully connected layer (one value per output channel, dimension 1 of
// the slice's box). Nothing moves: each rank works on what it holds.
#pragma once

#include <algorithm>
#include <cstdint>

#include "layout/box.hpp"

namespace convgrid {

// y = max(x, 0), in place.
void relu_forward(float* data, int64_t n);
// dx = dy where y > 0, else 0, in place on the gradient.
void relu_backward(const float* y, float* grad, int64_t n);

// ReLU6 of one value, min(max(x, 0), 6), and whether the gradient passes where the output is y:
// strictly inside (0, 6), as in PyTorch's ReLU6 (hardtanh(0, 6)), so x <= 0 and x >= 6 pass none.
inline float relu6(float x) { return std::min(std::max(x, 0.0f), 6.0f); }
inline bool relu6_passes(float y) { return y > 0.0f && y < 6.0f; }
// y = relu6(x), in place.
void relu6_forward(float* data, int64_t n);
// dx = dy where relu6_passes(y), else 0, in place on the gradient.
void relu6_backward(const float* y, float* grad, int64_t n);

// out[i] += bias[channel of element i].
void add_bias(const Slice& slice, const float* bias, float* out);
// dbias[channel] += sum of dout over the slice's elements of that channel.
void accumulate_bias_grad(const Slice& slice, const float* dout, float* dbias);
// The same added up in double: each plane run's sum is formed in float as above, so when every
// plane is one run (no row or column split) the result is the same whatever the order of the planes.
void accumulate_bias_grad(const Slice& slice, const float* dout, double* dbias);

}  // namespace convgrid
