// Which ONNX tensor holds which convgrid parameter of a network imported from ONNX: the one
// mapping that both reading a model's weights (train/onnx_initial_weights.hpp) and writing
// trained weights back into it (nn/onnx_export.hpp) follow.
//
//   conv        <layer>.weight  [K, C/groups, R, S] as ONNX stores it; <layer>.bias [K]
//   fc          <layer>.weight  [K, F]: Gemm transB=1 as stored, MatMul and Gemm transB=0 hold
//                               it transposed ([F, K]); <layer>.bias [K] (ONNX [K] or [1, K])
//   batch_norm  <layer>.weight (scale), .bias (B), .running_mean (mean), .running_var (var): [C]
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nn/onnx_import.hpp"

namespace convgrid {

struct OnnxParamLink {
  std::string layer;      // the convgrid layer
  std::string parameter;  // its parameter, "<layer>.weight", "<layer>.running_mean", ...
  std::string tensor;     // the ONNX initializer (or Constant node output) that holds it
  int64_t count = 0;      // values of the parameter, and of the tensor
  // An fc weight that ONNX holds as [F, K] where convgrid holds [K, F]: its K and F.
  bool transposed = false;
  int64_t K = 0, F = 0;
};

// The links of every conv, fc and batch_norm layer, in network order (weight, bias; batch norm's
// scale, shift, mean, var).
std::vector<OnnxParamLink> onnx_param_links(const OnnxNetwork& imported);

// A rows x cols row-major matrix as cols x rows.
std::vector<float> transposed(const std::vector<float>& values, int64_t rows, int64_t cols);

}  // namespace convgrid
