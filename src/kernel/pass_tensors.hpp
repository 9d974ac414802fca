// Which tensors each pass reads and writes (with their oneDNN execution-argument ids) and the
// plain extents of every tensor: the vocabulary both backends of LocalConv share.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "convgrid/local_conv.hpp"

namespace convgrid::kernel {

constexpr size_t kTensorCount = 8;
constexpr size_t kPassCount = 3;
constexpr size_t kMaxPassArguments = 4;

inline size_t index_of(Tensor t) { return static_cast<size_t>(t); }
inline size_t index_of(Pass p) { return static_cast<size_t>(p); }

// One array per tensor role (null where a call does not give one).
using TensorArrays = std::array<float*, kTensorCount>;

struct PassArgument {
  Tensor tensor;
  int dnnl_arg;  // DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, ...
  bool written;
};

// The arguments of pass p; bias and grad_bias only when with_bias.
std::vector<PassArgument> pass_arguments(Pass p, bool with_bias);

// Plain extents: N,C,H,W for input and grad_input; K,C,R,S for weights and grad_weights, or
// with groups G,K/G,C/G,R,S (oneDNN's grouped weights, the same array as K x C/G x R x S);
// N,K,Ho,Wo for output and grad_output; K for bias and grad_bias.
dnnl::memory::dims plain_dims(const ConvShape& shape, Tensor t);

}  // namespace convgrid::kernel
