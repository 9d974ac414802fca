// ONNX Pad nodes of zeros (see onnx_pad.hpp).
#include "nn/onnx_pad.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "convgrid/error.hpp"

namespace convgrid {

std::vector<int64_t> onnx_zero_pads(const onnx::NodeProto& node, const std::vector<int64_t>& pads,
                                    const std::optional<PadValue>& value) {
  const std::string mode = string_attribute(node, "mode", "constant");
  if (mode != "constant") throw InputError(fmt::format("mode={} is not supported (only constant zeros)", mode));
  if (value && (value->values.size() != 1 || value->values[0] != 0.0f))
    throw InputError(fmt::format("constant_value '{}' is not 0 (only a Pad of zeros is supported)", value->name));
  if (node.input_size() >= 4 && !node.input(3).empty()) throw InputError("its axes input is not supported");
  if (std::ranges::all_of(pads, [](int64_t p) { return p == 0; })) return {0, 0, 0, 0};
  const bool rows_and_columns = pads.size() == 8 && pads[0] == 0 && pads[1] == 0 && pads[4] == 0 && pads[5] == 0;
  if (!rows_and_columns || std::ranges::any_of(pads, [](int64_t p) { return p < 0; })) {
    throw InputError(fmt::format("pads=[{}] are not supported (only zeros before and after rows and columns)",
                                 fmt::join(pads, ",")));
  }
  return {pads[2], pads[3], pads[6], pads[7]};
}

}  // namespace convgrid
