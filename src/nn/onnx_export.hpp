// Trained weights written back into a copy of the ONNX model they came from (`convgrid export
// --onnx`): every tensor that holds a convgrid parameter (an initializer or a Constant node's
// value; nn/onnx_param_links.hpp) gets the parameter's values in the tensor's own extents (an
// fc weight held as [F, K] transposed back), as float32 raw_data (little-endian; float_data
// cleared). The graph, the other tensors, the attributes, the opset and the metadata stay as
// they were. The copy is written atomically (io/atomic_file.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "nn/network.hpp"

namespace convgrid {

// One tensor of the model that now holds a trained parameter.
struct OnnxExportedTensor {
  std::string tensor;         // its ONNX name
  std::vector<int64_t> dims;  // its extents, as the model has them
  std::string parameter;      // the convgrid parameter written into it
};

// Writes the model in `model_path` to `out` with `parameters` (whole tensors by convgrid parameter
// name, row-major in convgrid's layout, as a checkpoint holds them) in place of the tensors that
// hold them. Returns those tensors in network order (a tensor two layers share, once).
// InputError naming the value, and nothing written, when: the model does not import; a tensor is
// not FLOAT or keeps its data outside the file; a parameter is missing, has another number of
// values than its tensor, or has no tensor; two layers share a tensor but their values differ;
// `out` cannot be written.
std::vector<OnnxExportedTensor> export_onnx(
    const std::string& model_path, const std::map<std::string, std::vector<float>>& parameters,
    const std::string& out, const std::optional<Activation>& input_shape = {});

}  // namespace convgrid
