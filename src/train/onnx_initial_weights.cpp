// ONNX initializers to convgrid's whole parameter tensors, and those into this rank's shards.
#include "train/onnx_initial_weights.hpp"

#include <fmt/format.h>

#include <cmath>

#include "convgrid/error.hpp"
#include "nn/onnx_import.hpp"
#include "nn/onnx_model.hpp"
#include "train/batch_norm_kernel.hpp"
#include "train/checkpoint.hpp"

namespace convgrid {
namespace {

// [F, K] row-major to [K, F].
std::vector<float> transposed(const std::vector<float>& v, int64_t F, int64_t K) {
  std::vector<float> out(v.size());
  for (int64_t f = 0; f < F; ++f) {
    for (int64_t k = 0; k < K; ++k) out[k * F + f] = v[f * K + k];
  }
  return out;
}

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
  std::map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& t : model.graph().initializer()) initializers[t.name()] = &t;
  for (const auto& node : model.graph().node()) {  // Constant nodes hold tensors too
    if (node.op_type() != "Constant") continue;
    if (const auto* v = find_attribute(node, "value"); v && v->has_t())
      initializers[node.output(0)] = &v->t();
  }
  std::map<std::string, std::vector<float>> out;
  const auto take = [&](const Layer& layer, const char* suffix, const std::string& onnx_name,
                        int64_t count) -> std::vector<float>& {
    const auto it = initializers.find(onnx_name);
    if (it == initializers.end())
      throw Error(fmt::format("{}: no initializer '{}'", path, onnx_name));
    std::vector<float> values = float_values(*it->second);
    if (static_cast<int64_t>(values.size()) != count) {
      throw InputError(fmt::format("{}: initializer '{}' has {} values, layer '{}' needs {}", path,
                                   onnx_name, values.size(), layer.name, count));
    }
    return out[layer.name + suffix] = std::move(values);
  };
  for (const Layer& layer : imported.network.layers()) {
    const auto p = imported.params.find(layer.name);
    if (p == imported.params.end()) continue;
    const OnnxParams& o = p->second;
    const int64_t K = layer.conv.K, C = layer.in.C;
    switch (layer.kind) {
      case LayerKind::conv:
        take(layer, ".weight", o.weight, K * (C / layer.conv.groups) * layer.conv.R * layer.conv.S);
        if (!o.bias.empty()) take(layer, ".bias", o.bias, K);
        break;
      case LayerKind::fully_connected: {
        const int64_t F = C * layer.in.H * layer.in.W;
        std::vector<float>& w = take(layer, ".weight", o.weight, K * F);
        if (o.weight_transposed) w = transposed(w, F, K);
        if (!o.bias.empty()) take(layer, ".bias", o.bias, K);
        break;
      }
      case LayerKind::batch_norm:
        check_batch_norm(path, layer, o);
        take(layer, ".weight", o.scale, C);
        take(layer, ".bias", o.shift, C);
        take(layer, ".running_mean", o.mean, C);
        take(layer, ".running_var", o.var, C);
        break;
      default:
        break;
    }
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
