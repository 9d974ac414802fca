// An ONNX Clip node as a convgrid activation, or a refusal naming its bounds. The bounds come as
// the float attributes min and max (opset < 11) or as the constant inputs 1 and 2 (opset >= 11:
// initializers or Constant nodes, one value each; an empty input name means absent); an absent
// bound, like ONNX's default of the float's lowest or largest value, is unbounded:
//   [0, 6]   -> relu6 (PyTorch's ReLU6, MobileNet-V2)
//   [0, inf) -> relu  (torch.clamp(x, min=0))
#pragma once

#include <functional>
#include <string>

#include "nn/network.hpp"
#include "nn/onnx_model.hpp"

namespace convgrid {

// The constant tensor `name` of a node in the role `role` (as Importer::constant: InputError
// when it is not a constant).
using OnnxConstant =
    std::function<const onnx::TensorProto&(const std::string& name, const char* role)>;

// relu6 or relu for `node`. Throws InputError with the bare problem (the caller names the node):
// other bounds ("bounds [-1, 1] are not supported ..."), a bound given both as an attribute and
// as an input, or a bound input that is not one float constant.
LayerKind onnx_clip_kind(const onnx::NodeProto& node, const OnnxConstant& constant);

}  // namespace convgrid
