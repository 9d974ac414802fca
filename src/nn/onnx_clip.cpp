// ONNX Clip bounds read from attributes or constant inputs, and matched to relu6 or relu.
#include "nn/onnx_clip.hpp"

#include <fmt/format.h>

#include <limits>
#include <vector>

#include "convgrid/error.hpp"

namespace convgrid {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kLargest = std::numeric_limits<float>::max();

// The bound `name` ("min" or "max"), the node's attribute or its constant input `input`;
// `absent` when it has neither.
float clip_bound(const onnx::NodeProto& node, const char* name, int input, float absent,
                 const OnnxConstant& constant) {
  const onnx::AttributeProto* attribute = find_attribute(node, name);
  const bool given = node.input_size() > input && !node.input(input).empty();
  if (attribute && given) {
    throw InputError(fmt::format("its {} is given both as an attribute and as input {} '{}'", name,
                                 input, node.input(input)));
  }
  if (attribute) return attribute->f();
  if (!given) return absent;
  const std::vector<float> v = float_values(constant(node.input(input), name));
  if (v.size() != 1) {
    throw InputError(
        fmt::format("its {} '{}' has {} values, not 1", name, node.input(input), v.size()));
  }
  return v[0];
}

}  // namespace

LayerKind onnx_clip_kind(const onnx::NodeProto& node, const OnnxConstant& constant) {
  float lo = clip_bound(node, "min", 1, -kInf, constant);
  float hi = clip_bound(node, "max", 2, kInf, constant);
  if (lo <= -kLargest) lo = -kInf;  // ONNX's own defaults: no bound
  if (hi >= kLargest) hi = kInf;
  if (lo == 0 && hi == 6) return LayerKind::relu6;
  if (lo == 0 && hi == kInf) return LayerKind::relu;
  throw InputError(fmt::format(
      "bounds [{}, {}] are not supported (only [0, 6], ReLU6, and [0, inf), ReLU)", lo, hi));
}

}  // namespace convgrid
