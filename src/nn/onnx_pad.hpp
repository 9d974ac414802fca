// An ONNX Pad node as the rows and columns of zeros a convgrid layer reading it takes as its own
// padding (nn/onnx_import.cpp folds them into a Conv or AveragePool), or a refusal: only mode
// constant with the value 0 (or none), no axes input, and pads on rows and columns, none negative.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nn/onnx_model.hpp"

namespace convgrid {

// A Pad's constant value: its input 2's name and values, where it has one.
struct PadValue {
  std::string name;
  std::vector<float> values;
};

// The zeros `node` adds before and after rows and columns: {top, left, bottom, right}, all 0 for
// the identity. `pads` are its [N, C, H, W] begins then ends (an attribute before opset 11, an
// input since, which the caller resolves). Throws InputError with the bare problem (the caller
// names the node).
std::vector<int64_t> onnx_zero_pads(const onnx::NodeProto& node, const std::vector<int64_t>& pads,
                                    const std::optional<PadValue>& value);

}  // namespace convgrid
