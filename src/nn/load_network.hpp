// Loading the network a command names (--network): a built-in name, an ONNX file (.onnx, read by
// nn/onnx_import.hpp) or a JSON network file (nn/network_json.hpp).
#pragma once

#include <optional>
#include <string>

#include "nn/network.hpp"

namespace convgrid {

// `input_shape` (--input-shape) gives an ONNX model's per-sample input C x H x W where the file
// leaves it symbolic; for a built-in or JSON network it is an InputError.
Network load_network(const std::string& name_or_path,
                     const std::optional<Activation>& input_shape = {});

// "CxHxW" (e.g. "3x224x224") as an Activation; InputError naming the text otherwise.
Activation parse_input_shape(const std::string& text);

}  // namespace convgrid
