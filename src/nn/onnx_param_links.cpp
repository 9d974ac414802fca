// The convgrid parameters of an imported model and the ONNX tensors that hold them.
#include "nn/onnx_param_links.hpp"

#include <tuple>

namespace convgrid {

std::vector<OnnxParamLink> onnx_param_links(const OnnxNetwork& imported) {
  std::vector<OnnxParamLink> out;
  const auto link = [&](const Layer& layer, const char* suffix, const std::string& tensor,
                        int64_t count) -> OnnxParamLink& {
    return out.emplace_back(OnnxParamLink{layer.name, layer.name + suffix, tensor, count});
  };
  for (const Layer& layer : imported.network.layers()) {
    const auto p = imported.params.find(layer.name);
    if (p == imported.params.end()) continue;
    const OnnxParams& o = p->second;
    const int64_t K = layer.conv.K, C = layer.in.C;
    switch (layer.kind) {
      case LayerKind::conv:
        link(layer, ".weight", o.weight, K * (C / layer.conv.groups) * layer.conv.R * layer.conv.S);
        if (!o.bias.empty()) link(layer, ".bias", o.bias, K);
        break;
      case LayerKind::fully_connected: {
        const int64_t F = C * layer.in.H * layer.in.W;
        OnnxParamLink& w = link(layer, ".weight", o.weight, K * F);
        if (o.weight_transposed) std::tie(w.transposed, w.K, w.F) = std::tuple(true, K, F);
        if (!o.bias.empty()) link(layer, ".bias", o.bias, K);
        break;
      }
      case LayerKind::batch_norm:
        link(layer, ".weight", o.scale, C);
        link(layer, ".bias", o.shift, C);
        link(layer, ".running_mean", o.mean, C);
        link(layer, ".running_var", o.var, C);
        break;
      default:
        break;
    }
  }
  return out;
}

std::vector<float> transposed(const std::vector<float>& values, int64_t rows, int64_t cols) {
  std::vector<float> out(values.size());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) out[c * rows + r] = values[r * cols + c];
  }
  return out;
}

}  // namespace convgrid
