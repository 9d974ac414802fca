// ONNX initializers to convgrid's whole parameter tensors, and those into this rank's shards.
#include "train/onnx_initial_weights.hpp"

#include <fmt/format.h>

#include <cmath>

#include "convgrid/error.hpp"
#include "nn/onnx_import.hpp"
#include "nn/onnx_model.hpp"
#include "nn/onnx_param_links.hpp"
#include "train/batch_norm_kernel.hpp"
#include "train/checkpoint.hpp"

namespace convgrid {
namespace {

// Training with other constants would not follow PyTorch's model; planning does not use them.
void check_batch_norm(const std::string& path, const Layer& layer, const OnnxParams& o) {
  if (std::abs(o.epsilon - kBnEps) > 1e-6 * kBnEps) {
    throw InputError(
        fmt::format("{}: layer '{}' (BatchNormalization): epsilon={} is not supported "
                    "for training (convgrid's batch norm uses {})",
                    path, layer.name, o.epsilon, kBnEps));
  }
  if (std::abs((1 - o.momentum) - kBnMomentum) > 1e-6) {
    throw InputError(
        fmt::format("{}: layer '{}' (BatchNormalization): momentum={} is not supported "
                    "for training (convgrid's running statistics use ONNX momentum {}, "
                    "PyTorch's {})",
                    path, layer.name, o.momentum, 1 - kBnMomentum, kBnMomentum));
  }
}

}  // namespace

std::map<std::string, std::vector<float>> onnx_initial_tensors(
    const std::string& path, const std::optional<Activation>& input_shape) {
  const OnnxNetwork imported = import_onnx(path, input_shape);
  const onnx::ModelProto model = read_onnx_model(path);
  const std::map<std::string, const onnx::TensorProto*> tensors = constant_tensors(model.graph());
  for (const Layer& layer : imported.network.layers()) {
    if (layer.kind == LayerKind::batch_norm)
      check_batch_norm(path, layer, imported.params.at(layer.name));
  }
  std::map<std::string, std::vector<float>> out;
  for (const OnnxParamLink& link : onnx_param_links(imported)) {
    const auto it = tensors.find(link.tensor);
    if (it == tensors.end()) throw Error(fmt::format("{}: no initializer '{}'", path, link.tensor));
    std::vector<float> values = float_values(*it->second);
    if (static_cast<int64_t>(values.size()) != link.count) {
      throw InputError(fmt::format("{}: initializer '{}' has {} values, layer '{}' needs {}", path,
                                   link.tensor, values.size(), link.layer, link.count));
    }
    out[link.parameter] = link.transposed ? transposed(values, link.F, link.K) : std::move(values);
  }
  return out;
}

void load_initial_tensors(const std::map<std::string, std::vector<float>>& tensors,
                          const std::string& origin, std::vector<ParamShard>& params,
                          std::vector<ParamShard>& state) {
  for (const auto* list : {&params, &state}) {
    for (const ParamShard& p : *list) {
      const auto it = tensors.find(p.name);
      if (it == tensors.end()) {
        throw InputError(
            fmt::format("{}: holds no initial value for the network's {}", origin, p.name));
      }
      if (static_cast<int64_t>(it->second.size()) != p.global.volume()) {
        throw InputError(fmt::format("{}: {} has {} values, the network's has {}", origin, p.name,
                                     it->second.size(), p.global.volume()));
      }
    }
  }
  for (auto* list : {&params, &state}) {
    for (ParamShard& p : *list) copy_shard_of_whole(p, tensors.at(p.name).data(), p.value.data());
  }
}

}  // namespace convgrid
