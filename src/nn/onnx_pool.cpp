// ONNX pooling attributes checked against convgrid's pooling semantics (network.hpp).
#include "nn/onnx_pool.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "convgrid/error.hpp"

namespace convgrid {

using Ints = std::vector<int64_t>;

std::optional<PoolParams> onnx_pool_params(const onnx::NodeProto& node) {
  const auto kernel = ints_attribute(node, "kernel_shape");
  if (!kernel || kernel->size() != 2)
    throw InputError("kernel_shape must have 2 entries (2-D pooling)");
  const Ints stride = ints_attribute(node, "strides", {1, 1});
  const Ints dil = ints_attribute(node, "dilations", {1, 1});
  if (dil != Ints{1, 1})
    throw InputError(fmt::format("dilations=[{}] are not supported", fmt::join(dil, ",")));
  const std::string mode = string_attribute(node, "auto_pad", "NOTSET");
  if (mode != "NOTSET" && mode != "VALID")
    throw InputError(fmt::format("auto_pad={} is not supported for pooling", mode));
  const Ints pads = mode == "VALID" ? Ints{0, 0, 0, 0} : ints_attribute(node, "pads", {0, 0, 0, 0});
  if (pads[0] != pads[2] || pads[1] != pads[3]) {
    throw InputError(
        fmt::format("pads=[{}] are asymmetric; convgrid pools with the same padding on both sides",
                    fmt::join(pads, ",")));
  }
  if (stride[0] < 1 || stride[1] < 1) {
    throw InputError(fmt::format("strides=[{}] must be at least 1", fmt::join(stride, ",")));
  }
  PoolParams p{(*kernel)[0], (*kernel)[1], stride[0], stride[1], pads[0], pads[1]};
  if (p == PoolParams{}) return std::nullopt;  // the identity, whatever the rounding
  p.ceil_mode = int_attribute(node, "ceil_mode", 0) != 0;
  // count_include_pad=0 divides by a window's elements within the input, convgrid by those within
  // the padded input: the same without padding, a ceil_mode window past the end included.
  if (node.op_type() == "AveragePool" && int_attribute(node, "count_include_pad", 0) == 0 &&
      (p.pad_h || p.pad_w)) {
    throw InputError(
        fmt::format("count_include_pad=0 with pads {}x{} is not supported: convgrid's avg_pool "
                    "divides by the window, padding included (count_include_pad=1)",
                    p.pad_h, p.pad_w));
  }
  return p;
}

void check_mean_over_rows_and_columns(const std::vector<int64_t>& given) {
  Ints axes = given;
  for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
  std::ranges::sort(axes);
  if (axes != Ints{2, 3}) {
    throw InputError(fmt::format("axes=[{}] are not supported (only 2,3: the mean over rows and columns)",
                                 fmt::join(given, ",")));
  }
}

}  // namespace convgrid
