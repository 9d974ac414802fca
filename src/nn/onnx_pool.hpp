// An ONNX MaxPool or AveragePool node as convgrid pooling (PoolParams), or a refusal saying where
// ONNX's semantics and convgrid's differ:
//   - pads must be symmetric (convgrid pads top = bottom, left = right); auto_pad VALID or NOTSET;
//   - ceil_mode=1 as PyTorch computes it (nn/network.hpp): the last window starts inside the
//     input or its top/left padding, and where it runs past the padded input's end an average
//     divides by its part within the padded input (ONNX Runtime's AveragePool with
//     count_include_pad=1 divides by the whole window there before opset 19);
//   - AveragePool count_include_pad=0 (PyTorch: count_include_pad=False) only without padding:
//     convgrid's avg_pool divides by the window, padding included (count_include_pad=1);
//   - dilations 1.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "nn/network.hpp"
#include "nn/onnx_model.hpp"

namespace convgrid {

// The pooling of `node`; none when it is the identity (a 1x1 window of stride 1 without padding,
// as torch exports an adaptive pooling to the size it has). Throws InputError with the bare
// problem (the caller names the node).
std::optional<PoolParams> onnx_pool_params(const onnx::NodeProto& node);

// A ReduceMean's axes (negative ones from the end of 4), which must be 2 and 3 in some order: the
// mean over rows and columns, a global average pooling (MNASNet's x.mean([2, 3])). Throws
// InputError naming them otherwise.
void check_mean_over_rows_and_columns(const std::vector<int64_t>& axes);

}  // namespace convgrid
