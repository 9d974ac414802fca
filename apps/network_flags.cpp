// --input-shape CxHxW.
#include "network_flags.hpp"

#include <string>

#include "nn/load_network.hpp"

namespace convgrid::cli {

CLI::Option* add_input_shape_flag(CLI::App* sub, std::optional<Activation>& shape) {
  return sub->add_option_function<std::string>(
      "--input-shape", [&shape](const std::string& text) { shape = parse_input_shape(text); },
      "An ONNX model's per-sample input CxHxW (e.g. 3x224x224), where its file leaves it symbolic");
}

}  // namespace convgrid::cli
