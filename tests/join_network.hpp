// A network of Inception's and DenseNet's joins for the network and planner tests: three branches
// of a stem concatenated (one of them a pooling), the concat pooled and read by a convolution,
// and a DenseNet-like join of the pooled concat with that convolution's output, twice (an
// operand may repeat). `more` is appended to the layers (a classifier, or a layer under test).
#pragma once

#include <string>

namespace convgrid::test_data {

inline std::string join_network_json(const std::string& more = "") {
  return std::string(R"({"name": "joins", "input": {"C": 3, "H": 8, "W": 8}, "layers": [
  {"type": "conv", "name": "stem", "K": 6, "R": 3, "S": 3, "pad": 1},
  {"type": "conv", "name": "b1", "input": "stem", "K": 4, "R": 1, "S": 1},
  {"type": "conv", "name": "b2", "input": "stem", "K": 5, "R": 3, "S": 3, "pad": 1},
  {"type": "max_pool", "name": "b3", "input": "stem", "window": 3, "stride": 1, "pad": 1},
  {"type": "concat", "name": "cat", "input": "b1", "concat_inputs": ["b2", "b3"]},
  {"type": "max_pool", "name": "pool", "window": 2},
  {"type": "conv", "name": "c4", "K": 3, "R": 3, "S": 3, "pad": 1},
  {"type": "concat", "name": "dense", "input": "pool", "concat_inputs": ["c4", "c4"]})") +
         (more.empty() ? "" : ",\n  " + more) + "]}";
}

}  // namespace convgrid::test_data
