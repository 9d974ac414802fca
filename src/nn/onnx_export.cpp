// The parameters of an imported model written into its tensors, and the model written out.
#include "nn/onnx_export.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <set>
#include <utility>

#include "convgrid/error.hpp"
#include "io/atomic_file.hpp"
#include "nn/onnx_import.hpp"
#include "nn/onnx_model.hpp"
#include "nn/onnx_param_links.hpp"

namespace convgrid {
namespace {

static_assert(std::endian::native == std::endian::little, "raw_data is little-endian");

// float32 values as raw_data holds them.
std::string raw_bytes(const std::vector<float>& values) {
  return {reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float)};
}

// The model's tensor that holds `link`'s parameter, checked to be FLOAT, inside the file and of
// the parameter's size.
onnx::TensorProto& tensor_of(const std::map<std::string, onnx::TensorProto*>& tensors,
                             const OnnxParamLink& link, const std::string& path) {
  const auto it = tensors.find(link.tensor);
  if (it == tensors.end()) throw Error(fmt::format("{}: no initializer '{}'", path, link.tensor));
  onnx::TensorProto& t = *it->second;
  if (t.data_type() != onnx::TensorProto::FLOAT) {
    throw InputError(fmt::format(
        "{}: initializer '{}' of layer '{}' has element type {}; convgrid writes FLOAT only", path,
        link.tensor, link.layer, element_type_name(t.data_type())));
  }
  size_t count = 0;
  try {
    count = float_values(t).size();
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", path, e.what()));
  }
  if (static_cast<int64_t>(count) != link.count) {
    throw InputError(fmt::format("{}: initializer '{}' has {} values, layer '{}' needs {}", path,
                                 link.tensor, count, link.layer, link.count));
  }
  return t;
}

// The value of `link`'s parameter, checked to have as many values as its tensor `t`.
const std::vector<float>& value_of(const std::map<std::string, std::vector<float>>& parameters,
                                   const OnnxParamLink& link, const onnx::TensorProto& t,
                                   const std::string& path) {
  const auto p = parameters.find(link.parameter);
  if (p == parameters.end()) {
    throw InputError(fmt::format("{}: no value for {}, which initializer '{}' holds", path,
                                 link.parameter, link.tensor));
  }
  if (static_cast<int64_t>(p->second.size()) != link.count) {
    throw InputError(fmt::format("{}: {} has {} values, initializer '{}' [{}] holds {}", path,
                                 link.parameter, p->second.size(), link.tensor,
                                 fmt::join(t.dims(), ", "), link.count));
  }
  return p->second;
}

}  // namespace

std::vector<OnnxExportedTensor> export_onnx(
    const std::string& model_path, const std::map<std::string, std::vector<float>>& parameters,
    const std::string& out, const std::optional<Activation>& input_shape) {
  const OnnxNetwork imported = import_onnx(model_path, input_shape);
  onnx::ModelProto model = read_onnx_model(model_path);
  const std::map<std::string, onnx::TensorProto*> tensors =
      constant_tensors(*model.mutable_graph());
  const std::vector<OnnxParamLink> links = onnx_param_links(imported);
  std::set<std::string> linked;
  for (const OnnxParamLink& link : links) linked.insert(link.parameter);
  for (const auto& [name, values] : parameters) {
    if (!linked.contains(name)) {
      throw InputError(fmt::format("{}: no tensor of the model holds {}", model_path, name));
    }
  }
  std::map<std::string, std::string> written;  // tensor -> the parameter written into it
  std::vector<OnnxExportedTensor> exported;
  for (const OnnxParamLink& link : links) {
    onnx::TensorProto& t = tensor_of(tensors, link, model_path);
    const std::vector<float>& value = value_of(parameters, link, t, model_path);
    std::string raw = raw_bytes(link.transposed ? transposed(value, link.K, link.F) : value);
    if (const auto w = written.find(link.tensor); w != written.end()) {
      if (t.raw_data() != raw) {
        throw InputError(
            fmt::format("{}: initializer '{}' holds both {} and {}, whose trained values differ",
                        model_path, link.tensor, w->second, link.parameter));
      }
      continue;
    }
    t.clear_float_data();
    t.set_raw_data(std::move(raw));
    written[link.tensor] = link.parameter;
    exported.push_back({link.tensor, tensor_dims(t), link.parameter});
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    throw InputError(fmt::format("{}: protobuf cannot encode the model (2 GiB or more?)", out));
  }
  write_file_atomically(out, {bytes});
  return exported;
}

}  // namespace convgrid
