// The small integer tensors an ONNX graph computes from activations' shapes and integer constants,
// evaluated while the graph is imported. torch exports `x.view(x.size(0), -1)` as Shape, Gather,
// Unsqueeze, Concat and a Reshape by the result, and `nn.ZeroPad2d` / `F.pad` with their pads
// computed by ConstantOfShape, Concat, Reshape, Slice, Transpose and Cast from constants: graphs of
// shapes, not of activations. An element is a known integer or a multiple of the batch N, which
// `--batch` gives only later (a Shape of an activation has N first).
//
// Operators (every opset form torch writes): Shape (start, end), Gather (1-D data), Unsqueeze,
// Squeeze, Concat (1-D), Add, Sub, Mul, Div (same extents or one element), Cast (to an integer
// type), ConstantOfShape, Reshape, Transpose, Slice, Identity. Anything else on a shape value, an
// element that is not an integer or N times one, or a tensor of more than kMaxShapeElements
// elements is an InputError with the bare problem (the importer names the node).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nn/onnx_model.hpp"

namespace convgrid {

// `value`, or `value` times the batch N when `batch`.
struct ShapeElement {
  int64_t value = 0;
  bool batch = false;
  bool operator==(const ShapeElement&) const = default;
};

struct ShapeValue {
  std::vector<int64_t> dims;          // extents (none: a scalar)
  std::vector<ShapeElement> values;   // row-major, the product of dims of them
  bool operator==(const ShapeValue&) const = default;
};

inline constexpr int64_t kMaxShapeElements = 1 << 16;

// Its elements as "[N,-1]", "[2*N,3]".
std::string to_string(const ShapeValue& v);

// The shape value a tensor of the graph holds: none when it is an activation (or a float constant).
using ShapeValueOf = std::function<std::optional<ShapeValue>(const std::string& tensor)>;
// The ONNX shape of activation `tensor` ([N, C, H, W], or [N, F] where the graph has flattened it).
using ActivationShape = std::function<ShapeValue(const std::string& tensor)>;

// The shape value of an INT64 constant tensor.
ShapeValue shape_value_of_constant(const onnx::TensorProto& t);

// Whether `node` computes a shape value: a Shape or ConstantOfShape, or one of the other operators
// above whose data inputs are all shape values.
bool computes_shape_value(const onnx::NodeProto& node, const ShapeValueOf& value_of);

// The value `node` computes (its first output).
ShapeValue evaluate_shape_node(const onnx::NodeProto& node, const ShapeValueOf& value_of,
                               const ActivationShape& shape_of);

// The elements of `v`, which must all be known: InputError naming `what` when one is N times a
// number (a shape that depends on the batch).
std::vector<int64_t> known_values(const ShapeValue& v, const std::string& what);

}  // namespace convgrid
