// --input-shape, which every command that takes --network takes with it: the per-sample input
// C x H x W of an ONNX model whose graph input leaves it symbolic (nn/load_network.hpp).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>

#include "nn/network.hpp"

namespace convgrid::cli {

// Adds --input-shape CxHxW, parsed into `shape` (InputError naming the text when malformed).
CLI::Option* add_input_shape_flag(CLI::App* sub, std::optional<Activation>& shape);

}  // namespace convgrid::cli
