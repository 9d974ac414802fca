// The graph input's shape and a convolution's pads (auto_pad), from ONNX's attributes.
#include "nn/onnx_shapes.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "convgrid/error.hpp"

namespace convgrid {

GraphInput graph_input(const onnx::GraphProto& graph, const std::optional<Activation>& given) {
  std::set<std::string> initializers;
  for (const auto& t : graph.initializer()) initializers.insert(t.name());
  std::vector<const onnx::ValueInfoProto*> inputs;
  for (const auto& in : graph.input()) {
    if (!initializers.contains(in.name())) inputs.push_back(&in);
  }
  if (inputs.size() != 1) {
    std::vector<std::string> names;
    for (const auto* in : inputs) names.push_back(in->name());
    throw InputError(fmt::format("the graph has {} inputs ({}); a convgrid network takes one",
                                 inputs.size(), fmt::join(names, ", ")));
  }
  const std::string& name = inputs[0]->name();
  const auto& dims = inputs[0]->type().tensor_type().shape().dim();
  if (dims.size() != 4 && dims.size() != 2) {
    throw InputError(
        fmt::format("input '{}' has {} dimensions; convgrid takes N x C x H x W (or N x F)", name,
                    dims.size()));
  }
  std::vector<std::optional<int64_t>> chw;  // C, H, W; none: symbolic
  for (int d = 1; d < dims.size(); ++d) {
    if (dims[d].has_dim_value() && dims[d].dim_value() > 0) {
      chw.emplace_back(dims[d].dim_value());
    } else {
      chw.emplace_back();
    }
  }
  while (chw.size() < 3) chw.emplace_back(1);
  std::vector<std::string> shown;  // "3x?x?"
  for (const auto& d : chw) shown.push_back(d ? std::to_string(*d) : "?");
  if (!given) {
    if (!chw[0] || !chw[1] || !chw[2]) {
      throw InputError(
          fmt::format("input '{}' has the shape {} (? = symbolic): give --input-shape CxHxW", name,
                      fmt::join(shown, "x")));
    }
    return {name, {*chw[0], *chw[1], *chw[2]}};
  }
  const int64_t g[3] = {given->C, given->H, given->W};
  for (int d = 0; d < 3; ++d) {
    if (chw[d] && *chw[d] != g[d]) {
      throw InputError(fmt::format("--input-shape {} contradicts input '{}' of shape {}",
                                   given->to_string(), name, fmt::join(shown, "x")));
    }
  }
  return {name, *given};
}

std::vector<int64_t> conv_pads(const onnx::NodeProto& node, const std::vector<int64_t>& extent,
                               const std::vector<int64_t>& kernel,
                               const std::vector<int64_t>& stride,
                               const std::vector<int64_t>& dilation) {
  for (int d = 0; d < 2; ++d) {
    if (stride[d] < 1 || dilation[d] < 1) {
      throw InputError(fmt::format("strides=[{}] and dilations=[{}] must be at least 1",
                                   fmt::join(stride, ","), fmt::join(dilation, ",")));
    }
  }
  const std::string mode = string_attribute(node, "auto_pad", "NOTSET");
  if (mode == "NOTSET") return ints_attribute(node, "pads", {0, 0, 0, 0});
  if (mode == "VALID") return {0, 0, 0, 0};
  if (mode != "SAME_UPPER" && mode != "SAME_LOWER") {
    throw InputError(fmt::format("auto_pad={} is not supported", mode));
  }
  std::vector<int64_t> pads(4);
  for (int d = 0; d < 2; ++d) {
    const int64_t out = (extent[d] + stride[d] - 1) / stride[d];
    const int64_t total =
        std::max<int64_t>((out - 1) * stride[d] + (kernel[d] - 1) * dilation[d] + 1 - extent[d], 0);
    pads[d] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
    pads[d + 2] = total - pads[d];
  }
  return pads;
}

}  // namespace convgrid
