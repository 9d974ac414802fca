// Networks as JSON files (the format is in docs/networks.md); nn/load_network.hpp loads by name.
//
//   {"name": "tiny", "input": {"C": 3, "H": 32, "W": 32}, "layers": [
//     {"type": "conv", "name": "c1", "K": 16, "R": 3, "S": 3, "pad": 1, "bias": true},
//     {"type": "relu"}, {"type": "max_pool", "window": 2}, {"type": "flatten"},
//     {"type": "fc", "K": 10}, {"type": "softmax_xent"}]}
//
// Reading is strict: text that is not JSON (with the line and column; io/strict_json.hpp also
// refuses numbers beyond a double, nesting deeper than 64 and control characters in strings), a
// missing, unknown or repeated key, a value of the wrong type and every shape error of
// Network::add are each an InputError of one line that starts with the file and names the layer
// and the value.
#pragma once

#include <string>
#include <string_view>

#include "nn/network.hpp"

namespace convgrid {

// Parses a network; `origin` (the file name) starts every error message.
Network network_from_json(std::string_view text, const std::string& origin);

// The JSON form, one layer per line; network_from_json(network_to_json(n), ...) == n.
std::string network_to_json(const Network& network);

}  // namespace convgrid
