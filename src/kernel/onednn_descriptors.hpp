// The oneDNN descriptions of one ConvShape: plain memory descriptors of its tensors and the
// primitive descriptors of its three passes, which let oneDNN choose its preferred layouts.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include "convgrid/conv_shape.hpp"
#include "convgrid/local_conv.hpp"

namespace convgrid::kernel {

// Plain float32 layout of tensor t: nchw, oihw (goihw with groups) or x; for input, grad_output
// and weights with the leading stride of `strides` when it is not 0 (entries of dimension 0,
// samples or filters, that far apart).
dnnl::memory::desc plain_desc(const ConvShape& shape, Tensor t, const PlainStrides& strides = {});

// Attributes of every primitive the engine keeps: its scratchpad is given by the caller
// (scratchpad_mode::user), so executing it allocates nothing.
dnnl::primitive_attr user_scratchpad_attr();

// The forward pass (training, direct algorithm), every tensor in format any.
dnnl::convolution_forward::primitive_desc forward_desc(const ConvShape& shape, bool with_bias,
                                                       const dnnl::engine& engine);

// A backward pass (backward_data or backward_weights), with the forward one as its hint.
dnnl::primitive_desc backward_desc(Pass p, const ConvShape& shape, bool with_bias,
                                   const dnnl::convolution_forward::primitive_desc& hint);

}  // namespace convgrid::kernel
