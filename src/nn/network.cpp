// Shape inference and checks of a network, layer by layer, and the list of its compute layers.
#include "nn/network.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "convgrid/checked.hpp"
#include "convgrid/error.hpp"

namespace convgrid {
namespace {

constexpr int64_t kMaxExtent = int64_t{1} << 40;  // the bound ConvShape puts on every extent

void check_extent(std::string_view what, int64_t v, int64_t lowest) {
  if (v < lowest || v > kMaxExtent) {
    throw InputError(fmt::format("{}={} must be in [{}, 2^40]", what, v, lowest));
  }
}

}  // namespace

bool is_compute(LayerKind kind) {
  return kind == LayerKind::conv || kind == LayerKind::fully_connected;
}

bool is_pool(LayerKind kind) {
  return kind == LayerKind::max_pool || kind == LayerKind::avg_pool ||
         kind == LayerKind::global_avg_pool;
}

namespace {

bool is_flat(const Activation& a) { return a.H == 1 && a.W == 1; }

// The pooled extent of `extent` input rows (or columns): network.hpp's formula.
int64_t pooled_extent(int64_t extent, int64_t window, int64_t stride, int64_t pad, bool ceil_mode) {
  const int64_t span = extent + 2 * pad - window;
  if (!ceil_mode) return span / stride + 1;
  const int64_t out = (span + stride - 1) / stride + 1;
  // PyTorch's rule: the last window starts inside the input or its top/left padding.
  return (out - 1) * stride >= extent + pad ? out - 1 : out;
}

Activation pooled(const PoolParams& p, const Activation& in) {
  check_extent("window(h)", p.window_h, 1);
  check_extent("window(w)", p.window_w, 1);
  check_extent("stride(h)", p.stride_h, 1);
  check_extent("stride(w)", p.stride_w, 1);
  check_extent("pad(h)", p.pad_h, 0);
  check_extent("pad(w)", p.pad_w, 0);
  if (2 * p.pad_h > p.window_h || 2 * p.pad_w > p.window_w) {
    throw InputError(fmt::format("pad {}x{} is more than half the window {}x{}", p.pad_h, p.pad_w,
                                 p.window_h, p.window_w));
  }
  const int64_t padded_h = in.H + 2 * p.pad_h, padded_w = in.W + 2 * p.pad_w;
  if (p.window_h > padded_h || p.window_w > padded_w) {
    throw InputError(fmt::format("window {}x{} is larger than the padded input {}x{} (input {})",
                                 p.window_h, p.window_w, padded_h, padded_w, in.to_string()));
  }
  return {in.C, p.out_h(in.H), p.out_w(in.W)};
}

// The output of a layer whose input is set; throws InputError with the bare problem.
Activation output_of(const Layer& layer) {
  const Activation& in = layer.in;
  switch (layer.kind) {
    case LayerKind::fully_connected: {
      ConvParams fc_only;
      fc_only.K = layer.conv.K;
      fc_only.bias = layer.conv.bias;
      if (layer.conv != fc_only) {
        throw InputError("a fully connected layer has R=S=1, stride 1, pad 0 and dilation 1");
      }
      if (!is_flat(in)) {
        throw InputError(
            fmt::format("input {} is not flat (H=W=1): put a flatten before it", in.to_string()));
      }
      [[fallthrough]];
    }
    case LayerKind::conv: {
      const ConvShape s = conv_shape(layer, 1);
      return {s.K, s.Ho(), s.Wo()};
    }
    case LayerKind::max_pool:
    case LayerKind::avg_pool:
    case LayerKind::global_avg_pool:
      return pooled(layer.pool, in);
    case LayerKind::flatten:
      return {checked_product({in.C, in.H, in.W}, "flattened features (C*H*W)"), 1, 1};
    case LayerKind::softmax_xent:
      if (!is_flat(in)) {
        throw InputError(fmt::format("input {} is not flat (H=W=1): the loss takes class scores",
                                     in.to_string()));
      }
      return in;
    case LayerKind::add:
      if (layer.residual.empty()) {
        throw InputError("it has no residual (an add layer adds its residual to its input)");
      }
      return in;
    case LayerKind::concat:
      throw Error("a concat's output is joined in Network::add");
    case LayerKind::scale:
      if (layer.gate.empty()) throw InputError("it has no gate (a scale layer multiplies by its gate)");
      return in;
    case LayerKind::relu:
    case LayerKind::relu6:
    case LayerKind::sigmoid:
    case LayerKind::tanh:
    case LayerKind::hardsigmoid:
    case LayerKind::hardswish:
    case LayerKind::silu:
    case LayerKind::batch_norm:
      return in;
  }
  throw Error("unknown layer kind");
}

// A concat's output: its input's channels, then each concat input's, on the same H x W.
template <class OutputOf>
Activation joined(const Layer& layer, OutputOf&& output_of_layer) {
  if (layer.concat_inputs.empty()) {
    throw InputError("it has no concat inputs (a concat joins its input and at least one more)");
  }
  if (!layer.residual.empty()) throw InputError("a concat has no residual");
  Activation out = layer.in;
  for (const std::string& ref : layer.concat_inputs) {
    const Activation a = output_of_layer(ref);
    if (a.H != out.H || a.W != out.W) {
      throw InputError(fmt::format("concat input '{}' is {} but the input is {}: the operands of a "
                                   "concat must have the same H x W",
                                   ref, a.to_string(), layer.in.to_string()));
    }
    out.C = checked_add(out.C, a.C, "concatenated channels");
  }
  check_extent("concatenated channels", out.C, 1);
  return out;
}

}  // namespace

std::string Activation::to_string() const { return fmt::format("{}x{}x{}", C, H, W); }

int64_t PoolParams::out_h(int64_t H) const {
  return pooled_extent(H, window_h, stride_h, pad_h, ceil_mode);
}

int64_t PoolParams::out_w(int64_t W) const {
  return pooled_extent(W, window_w, stride_w, pad_w, ceil_mode);
}

std::string_view to_string(LayerKind kind) {
  switch (kind) {
    case LayerKind::conv:
      return "conv";
    case LayerKind::relu:
      return "relu";
    case LayerKind::relu6:
      return "relu6";
    case LayerKind::sigmoid:
      return "sigmoid";
    case LayerKind::tanh:
      return "tanh";
    case LayerKind::hardsigmoid:
      return "hardsigmoid";
    case LayerKind::hardswish:
      return "hardswish";
    case LayerKind::silu:
      return "silu";
    case LayerKind::add:
      return "add";
    case LayerKind::scale:
      return "scale";
    case LayerKind::concat:
      return "concat";
    case LayerKind::max_pool:
      return "max_pool";
    case LayerKind::avg_pool:
      return "avg_pool";
    case LayerKind::global_avg_pool:
      return "global_avg_pool";
    case LayerKind::batch_norm:
      return "batch_norm";
    case LayerKind::flatten:
      return "flatten";
    case LayerKind::fully_connected:
      return "fc";
    case LayerKind::softmax_xent:
      return "softmax_xent";
  }
  return "unknown";
}

Network::Network(std::string name, Activation input) : name_(std::move(name)), input_(input) {
  try {
    check_extent("C", input.C, 1);
    check_extent("H", input.H, 1);
    check_extent("W", input.W, 1);
  } catch (const InputError& e) {
    throw InputError(fmt::format("network '{}': input {}", name_, e.what()));
  }
}

const Layer& Network::add(Layer layer) {
  const size_t index = layers_.size();
  if (layer.name.empty()) layer.name = fmt::format("{}{}", to_string(layer.kind), index);
  try {
    if (auto same = find(layer.name)) {
      throw InputError(fmt::format("the name is taken by layers[{}]", *same));
    }
    if (!layers_.empty() && layers_.back().kind == LayerKind::softmax_xent) {
      throw InputError(fmt::format("it follows the loss '{}', which must be the last layer",
                                   layers_.back().name));
    }
    auto earlier = [&](std::string_view role, const std::string& ref) -> const Layer& {
      auto i = find(ref);
      if (!i) throw InputError(fmt::format("{} '{}' names no earlier layer", role, ref));
      return layers_[*i];
    };
    layer.in = layer.input.empty() ? output() : earlier("input", layer.input).out;
    if (!layer.residual.empty()) {
      const Activation& added = earlier("residual", layer.residual).out;
      if (added != layer.in) {
        throw InputError(fmt::format("residual '{}' has output {} but the input is {}",
                                     layer.residual, added.to_string(), layer.in.to_string()));
      }
    }
    if (!layer.gate.empty()) {
      if (layer.kind != LayerKind::scale) throw InputError(fmt::format("it has a gate '{}' but only a scale has one", layer.gate));
      const Activation& gate = earlier("gate", layer.gate).out;
      if (gate != Activation{layer.in.C, 1, 1}) {
        throw InputError(fmt::format("gate '{}' has output {} but must be {}x1x1 for the input {}", layer.gate,
                                     gate.to_string(), layer.in.C, layer.in.to_string()));
      }
    }
    if (layer.kind == LayerKind::global_avg_pool) layer.pool = {layer.in.H, layer.in.W, 1, 1, 0, 0};
    if (layer.kind != LayerKind::concat) {
      if (!layer.concat_inputs.empty()) {
        throw InputError(fmt::format("it has concat inputs '{}' but only a concat joins inputs",
                                     fmt::join(layer.concat_inputs, "', '")));
      }
      layer.out = output_of(layer);
    } else {
      layer.out = joined(layer, [&](const std::string& ref) { return earlier("concat input", ref).out; });
    }
  } catch (const InputError& e) {
    throw InputError(fmt::format("network '{}': layers[{}] '{}' ({}): {}", name_, index, layer.name,
                                 to_string(layer.kind), e.what()));
  }
  layers_.push_back(std::move(layer));
  return layers_.back();
}

const Activation& Network::output() const { return layers_.empty() ? input_ : layers_.back().out; }

std::optional<size_t> Network::find(std::string_view name) const {
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (layers_[i].name == name) return i;
  }
  return std::nullopt;
}

std::optional<size_t> Network::producer(size_t index) const {
  const Layer& layer = layers_[index];
  if (!layer.input.empty()) return find(layer.input);
  if (index == 0) return std::nullopt;
  return index - 1;
}

std::vector<ComputeLayer> Network::compute_layers() const {
  std::vector<ComputeLayer> out;
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (!is_compute(layers_[i].kind)) continue;
    const ActivationSource from = input_source(i);
    out.push_back({i, from.layer, from.through_pool_or_flatten});
  }
  return out;
}

ActivationSource Network::trace(std::optional<size_t> from) const {
  ActivationSource s;
  s.pooled = from ? layers_[*from].out : input_;
  for (auto p = from; p; p = producer(*p)) {
    const Layer& layer = layers_[*p];
    if (is_compute(layer.kind)) {
      s.layer = p;
      break;
    }
    if (layer.kind == LayerKind::flatten && !s.joined) s.pooled = layer.in;
    s.through_pool_or_flatten |=
        is_pool(layer.kind) || layer.kind == LayerKind::flatten || layer.kind == LayerKind::concat;
    s.joined |= layer.kind == LayerKind::concat;
  }
  return s;
}

ActivationSource Network::input_source(size_t index) const { return trace(producer(index)); }

ActivationSource Network::residual_source(size_t index) const {
  const Layer& layer = layers_.at(index);
  if (layer.residual.empty()) throw Error(fmt::format("layer '{}' has no residual", layer.name));
  return trace(find(layer.residual));
}

ActivationSource Network::concat_source(size_t index, size_t operand) const {
  const Layer& layer = layers_.at(index);
  if (layer.kind != LayerKind::concat || operand > layer.concat_inputs.size()) {
    throw Error(fmt::format("layer '{}' has no concat operand {}", layer.name, operand));
  }
  return trace(operand == 0 ? producer(index) : find(layer.concat_inputs[operand - 1]));
}

ActivationSource Network::gate_source(size_t index) const {
  const Layer& layer = layers_.at(index);
  if (layer.kind != LayerKind::scale) throw Error(fmt::format("layer '{}' is not a scale", layer.name));
  return trace(find(layer.gate));
}

std::vector<int64_t> Network::concat_channels(size_t index) const {
  const Layer& layer = layers_.at(index);
  if (layer.kind != LayerKind::concat) throw Error(fmt::format("layer '{}' is not a concat", layer.name));
  std::vector<int64_t> out{layer.in.C};
  for (const std::string& ref : layer.concat_inputs) out.push_back(layers_[*find(ref)].out.C);
  return out;
}

std::vector<std::optional<size_t>> Network::operands(size_t index) const {
  const Layer& layer = layers_.at(index);
  std::vector<std::optional<size_t>> out{producer(index)};
  if (!layer.residual.empty()) out.push_back(find(layer.residual));
  for (const std::string& ref : layer.concat_inputs) out.push_back(find(ref));
  if (!layer.gate.empty()) out.push_back(find(layer.gate));
  return out;
}

ConvShape conv_shape(const Layer& layer, int64_t batch) {
  if (!is_compute(layer.kind)) {
    throw Error(
        fmt::format("layer '{}' is a {}, not a convolution", layer.name, to_string(layer.kind)));
  }
  const ConvParams& p = layer.conv;
  const ConvShape s{.N = batch,
                    .C = layer.in.C,
                    .H = layer.in.H,
                    .W = layer.in.W,
                    .K = p.K,
                    .R = p.R,
                    .S = p.S,
                    .stride_h = p.stride_h,
                    .stride_w = p.stride_w,
                    .pad_top = p.pad_top,
                    .pad_left = p.pad_left,
                    .pad_bottom = p.pad_bottom,
                    .pad_right = p.pad_right,
                    .dil_h = p.dil_h,
                    .dil_w = p.dil_w,
                    .groups = p.groups};
  s.validate();
  return s;
}

}  // namespace convgrid
