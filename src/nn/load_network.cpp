// The dispatch of --network: built-in name, .onnx file, else a JSON file.
#include "nn/load_network.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "convgrid/error.hpp"
#include "nn/builtin_networks.hpp"
#include "nn/network_json.hpp"
#include "nn/onnx_import.hpp"

namespace convgrid {

Network load_network(const std::string& name_or_path,
                     const std::optional<Activation>& input_shape) {
  if (is_onnx_path(name_or_path)) return import_onnx(name_or_path, input_shape).network;
  if (input_shape) {
    throw InputError(fmt::format("--input-shape {} applies to .onnx networks, not '{}'",
                                 input_shape->to_string(), name_or_path));
  }
  const auto names = builtin_network_names();
  if (std::ranges::find(names, name_or_path) != names.end()) return builtin_network(name_or_path);
  std::ifstream file(name_or_path, std::ios::binary);
  if (!file) {
    throw InputError(fmt::format("'{}' is neither a built-in network ({}) nor a readable file: {}",
                                 name_or_path, fmt::join(names, ", "), std::strerror(errno)));
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) {
    throw InputError(fmt::format("{}: read error: {}", name_or_path, std::strerror(errno)));
  }
  return network_from_json(text.str(), name_or_path);
}

Activation parse_input_shape(const std::string& text) {
  int64_t v[3] = {0, 0, 0};
  const char* p = text.data();
  const char* const end = p + text.size();
  bool ok = true;
  for (int i = 0; i < 3 && ok; ++i) {
    if (i > 0) ok = p != end && *p++ == 'x';
    if (!ok) break;
    const auto [next, ec] = std::from_chars(p, end, v[i]);
    ok = ec == std::errc() && v[i] > 0;
    p = next;
  }
  if (!ok || p != end) {
    throw InputError(fmt::format(
        "--input-shape '{}': expected CxHxW with positive integers, e.g. 3x224x224", text));
  }
  return {v[0], v[1], v[2]};
}

}  // namespace convgrid
