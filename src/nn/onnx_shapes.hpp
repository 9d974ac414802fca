// Shapes an ONNX graph leaves to be worked out: the graph input's per-sample C x H x W (the batch
// extent is ignored; symbolic extents come from --input-shape), and a convolution's explicit pads
// from `pads` or `auto_pad` (SAME_UPPER puts the odd pixel at the end, SAME_LOWER at the start;
// both give ceil(extent / stride) outputs).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "nn/network.hpp"
#include "nn/onnx_model.hpp"

namespace convgrid {

struct GraphInput {
  std::string name;
  Activation shape;
};

// The one graph input that is not an initializer, N x C x H x W (or N x F: F x 1 x 1). `given`
// fills the symbolic extents and must equal the fixed ones. InputError (without the file) when
// there is not exactly one input, it has another rank, or an extent is neither fixed nor given.
GraphInput graph_input(const onnx::GraphProto& graph, const std::optional<Activation>& given);

// [top, left, bottom, right] of a Conv node on an extent x kernel (h, w), with its stride and
// dilation. InputError for an unknown auto_pad.
std::vector<int64_t> conv_pads(const onnx::NodeProto& node, const std::vector<int64_t>& extent,
                               const std::vector<int64_t>& kernel,
                               const std::vector<int64_t>& stride,
                               const std::vector<int64_t>& dilation);

}  // namespace convgrid
