// Networks from ONNX files (torch.onnx.export): the graph's nodes become convgrid layers, named
// after their nodes, in the graph's (topological) order.
//
//   Conv (group, stride, dilation, pads incl. asymmetric, auto_pad, bias)  -> conv
//   Gemm (transA 0, alpha = beta = 1) and MatMul with constant weights       -> fc
//     (an Add of a constant right after a MatMul is its bias)
//   Relu -> relu;  BatchNormalization -> batch_norm (its epsilon and momentum matter to training
//     only, which refuses those that differ from convgrid's: train/onnx_initial_weights.hpp)
//   Clip [0, 6] (ReLU6) -> relu6, Clip [0, inf) -> relu; bounds as attributes (opset < 11) or
//     constant inputs (opset >= 11): nn/onnx_clip.hpp
//   MaxPool, AveragePool (symmetric pads; ceil_mode=1 as PyTorch computes it: nn/onnx_pool.hpp;
//     count_include_pad=0 only without padding) -> max_pool, avg_pool; a 1x1 window of stride 1
//     is removed; GlobalAveragePool -> global_avg_pool
//   Flatten (axis 1), Reshape to [N, C*H*W] -> flatten;  Identity, Dropout -> removed
//   Softmax, LogSoftmax as the graph's output -> softmax_xent; else a softmax_xent named "loss"
//     is appended when the output is flat (class scores: what training needs last)
//   Add of two activations -> the `residual` of the one layer that reads its output: that
//     layer's input is the Add's first operand (the main path) and its residual the second
//     (an operand that is the graph input goes second: a residual must be a layer). An Add read
//     by several nodes, by another Add or as the graph output is an `add` layer of its own with
//     that input and residual (MobileNet-V2's blocks, where the next block reads the sum twice).
//     An Add passed on by Identity or Dropout is refused.
//
// The input shape is the graph input's C x H x W (its batch extent is ignored; any extent may be
// symbolic); `input_shape` gives the symbolic ones, and must agree with the fixed ones.
// Anything else is an InputError of one line, "<file>: node '<name>' (<op>): <what is missing>"
// (an unnamed node is '<op> #<index>'): a model is imported whole or not at all.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "nn/network.hpp"

namespace convgrid {

// The initializers that hold a layer's parameters, by ONNX tensor name ("" = none).
struct OnnxParams {
  std::string weight, bias;        // conv: weight [K,C,R,S]; fc: [K,F], or [F,K] when transposed
  bool weight_transposed = false;  // fc from Gemm transB=0 or MatMul
  std::string scale, shift, mean, var;     // batch_norm
  float epsilon = 1e-5f, momentum = 0.9f;  // batch_norm, as ONNX states them (its defaults)

  bool operator==(const OnnxParams&) const = default;
};

struct OnnxNetwork {
  Network network;
  std::map<std::string, OnnxParams> params;  // by layer name: conv, fc and batch_norm layers
};

// Whether `path` names an ONNX file (ends in ".onnx", any case).
bool is_onnx_path(const std::string& path);

// Imports the model in `path`; the network is named after the file (its stem).
OnnxNetwork import_onnx(const std::string& path, const std::optional<Activation>& input_shape = {});

}  // namespace convgrid
