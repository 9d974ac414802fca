// The walk over an ONNX graph: each node, in order, becomes a layer of the network (or an alias,
// a pending Add that the Add's one reader takes as its residual, a pending Pad of zeros that the
// Conv or AveragePool reading it takes as padding, or a shape value: integers computed from
// shapes and constants, nn/onnx_shape_values.hpp), with every refusal naming the node.
#include "nn/onnx_import.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <set>
#include <utility>

#include "convgrid/error.hpp"
#include "nn/onnx_clip.hpp"
#include "nn/onnx_model.hpp"
#include "nn/onnx_pad.hpp"
#include "nn/onnx_pool.hpp"
#include "nn/onnx_shape_values.hpp"
#include "nn/onnx_shapes.hpp"

namespace convgrid {
namespace {

using Ints = std::vector<int64_t>;

// A node's refusal: the message without the file and node, which Importer::run adds.
[[noreturn]] void refuse(const std::string& what) { throw InputError(what); }

// The nodes that take no residual: an Add that one of them reads is an add layer of its own.
constexpr std::string_view kPassesOn[] = {"Add", "Identity", "Dropout", "Concat", "Pad"};

// What an activation tensor of the graph is: the graph input, a layer's output, or an Add of
// two such tensors that the one node reading it takes as its input plus residual.
struct Source {
  std::optional<size_t> layer;  // none: the graph input
};
struct PendingAdd {
  Source main, shortcut;
};

// A layer name from a node name: torch's "/layer1/layer1.0/conv1/Conv" loses its leading '/';
// characters other than letters, digits and "._/-+" become '_'; an unnamed node is <op>_<index>.
std::string layer_name(const onnx::NodeProto& node, int index) {
  std::string name = node.name();
  while (!name.empty() && name.front() == '/') name.erase(name.begin());
  if (name.empty()) name = fmt::format("{}_{}", node.op_type(), index);
  for (char& c : name) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) ||
                    std::string_view("._/-+").find(c) != std::string_view::npos;
    if (!ok) c = '_';
  }
  return name;
}

class Importer {
 public:
  Importer(const std::string& path, const onnx::ModelProto& model,
           const std::optional<Activation>& shape)
      : path_(path),
        graph_(model.graph()),
        constants_(initializers(graph_)),
        net_(std::filesystem::path(path).stem().string(), input_shape(shape)) {
    for (const auto& node : graph_.node()) {
      if (node.op_type() == "Shape") continue;  // reads no values: an Add it reads may stay pending
      for (const auto& in : node.input()) {
        ++readers_[in];
        if (std::ranges::find(kPassesOn, node.op_type()) != std::end(kPassesOn))
          passed_on_.insert(in);
      }
    }
    for (const auto& out : graph_.output()) ++readers_[out.name()];
  }

  OnnxNetwork run() {
    for (int i = 0; i < graph_.node_size(); ++i) {
      const onnx::NodeProto& node = graph_.node(i);
      if (skip_.contains(i)) continue;
      try {
        import_node(node, i);
      } catch (const InputError& e) {  // a refusal, or a shape error of Network::add
        throw InputError(fmt::format("{}: node {}: {}", path_, node_label(node, i), e.what()));
      }
    }
    finish();
    return {std::move(net_), std::move(params_)};
  }

 private:
  static std::map<std::string, const onnx::TensorProto*> initializers(
      const onnx::GraphProto& graph) {
    std::map<std::string, const onnx::TensorProto*> out;
    for (const auto& t : graph.initializer()) out[t.name()] = &t;
    return out;
  }

  // Sets input_name_; called while net_ is built (after the members declared before it).
  Activation input_shape(const std::optional<Activation>& given) {
    try {
      const GraphInput in = graph_input(graph_, given);
      input_name_ = in.name;
      return in.shape;
    } catch (const InputError& e) {
      fail(e.what());
    }
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("{}: {}", path_, what));
  }

  // The constant tensor `name` (an initializer or a Constant node's value); refuses otherwise.
  const onnx::TensorProto& constant(const std::string& name, const char* role) const {
    auto it = constants_.find(name);
    if (it == constants_.end())
      refuse(fmt::format("its {} '{}' is not a constant (initializer)", role, name));
    return *it->second;
  }

  // The activation a node reads: where it comes from and, for an Add's output, the residual.
  struct Read {
    Source main;
    std::optional<Source> shortcut;
  };
  Read read(const std::string& tensor) const {
    if (values_.contains(tensor)) {
      refuse(fmt::format("its input '{}' is a shape value (integers computed from shapes and "
                         "constants), not an activation", tensor));
    }
    if (pads_.contains(tensor)) {
      refuse(fmt::format("its input '{}' is a Pad of zeros, which convgrid folds only into a Conv or "
                         "an AveragePool reading it", tensor));
    }
    if (tensor == input_name_) return {Source{}, std::nullopt};
    if (auto it = sources_.find(tensor); it != sources_.end()) return {it->second, std::nullopt};
    if (auto it = adds_.find(tensor); it != adds_.end())
      return {it->second.main, it->second.shortcut};
    if (constants_.contains(tensor))
      refuse(fmt::format("its data input '{}' is a constant, not an activation", tensor));
    refuse(fmt::format("its input '{}' is produced by no earlier node", tensor));
  }

  // Adds the layer reading input 0 of the node and records its output.
  const Layer& add(Layer layer, const onnx::NodeProto& node) {
    return add(std::move(layer), read(node.input(0)), node.output(0));
  }

  // Adds the layer reading `r` and records it as the producer of `output`.
  const Layer& add(Layer layer, const Read& r, const std::string& output) {
    if (r.main.layer) {
      if (*r.main.layer + 1 != net_.layers().size())
        layer.input = net_.layers()[*r.main.layer].name;
    } else if (!net_.layers().empty()) {
      refuse(fmt::format(
          "it reads the graph input '{}', which in convgrid only the first layer may read",
          input_name_));
    }
    if (r.shortcut) layer.residual = net_.layers()[*r.shortcut->layer].name;
    std::string name = layer.name;
    for (int k = 2; net_.find(layer.name); ++k) layer.name = fmt::format("{}_{}", name, k);
    const Layer& added = net_.add(std::move(layer));
    alias(output, Source{net_.layers().size() - 1});
    return added;
  }

  void alias(const std::string& tensor, Source s) { sources_[tensor] = s; }

  // Only the first output of a node may be read (Dropout's mask, BatchNormalization's statistics).
  void check_extra_outputs_unread(const onnx::NodeProto& node) const {
    for (int o = 1; o < node.output_size(); ++o) {
      if (!node.output(o).empty() && readers_.contains(node.output(o))) {
        refuse(fmt::format("its output {} '{}' is read, which convgrid cannot provide", o,
                           node.output(o)));
      }
    }
  }

  void import_node(const onnx::NodeProto& node, int index) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") {
      refuse(fmt::format("operators of domain '{}' are not supported", node.domain()));
    }
    const std::string& op = node.op_type();
    const std::string name = layer_name(node, index);
    if (op == "Constant") return constant_node(node);
    if (node.input_size() == 0 || node.output_size() == 0) refuse("it has no input or no output");
    if (computes_shape_value(node, std::bind_front(&Importer::shape_value, this))) {
      values_[node.output(0)] = evaluate_shape_node(node, std::bind_front(&Importer::shape_value, this),
                                                    std::bind_front(&Importer::onnx_shape, this));
      return;
    }
    if (op == "Identity" && constants_.contains(node.input(0))) {  // torch's alias of a shared weight
      constants_[node.output(0)] = constants_.at(node.input(0));
      return;
    }
    if (op == "Identity" || op == "Dropout") {
      check_extra_outputs_unread(node);
      return alias(node.output(0), read(node.input(0)).main);  // an Add it reads is a layer
    }
    check_extra_outputs_unread(node);
    if (op == "Conv") return conv(node, name);
    if (op == "Gemm" || op == "MatMul") return fully_connected(node, name, index);
    if (op == "Add") return add_node(node, name);
    if (op == "Relu") {
      add(Layer(LayerKind::relu, name), node);
      return;
    }
    if (op == "Sigmoid" || op == "HardSigmoid") return gate_activation(node, name, index);
    if (op == "Tanh" || op == "HardSwish") {
      add(Layer(op == "Tanh" ? LayerKind::tanh : LayerKind::hardswish, name), node);
      return;
    }
    if (op == "Mul") return product(node, name);
    if (op == "BatchNormalization") return batch_norm(node, name);
    if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool")
      return pool(node, name);
    if (op == "Flatten") {
      const int64_t axis = int_attribute(node, "axis", 1);
      if (axis != 1) refuse(fmt::format("axis={} is not supported (only 1: N x C*H*W)", axis));
      add(Layer(LayerKind::flatten, name), node);
      return mark_flat();
    }
    if (op == "Reshape") return reshape(node, name);
    if (op == "Softmax" || op == "LogSoftmax") return softmax(node, name);
    if (op == "Clip") {
      add(Layer(onnx_clip_kind(node, std::bind_front(&Importer::constant, this)), name), node);
      return;
    }
    if (op == "Concat") return concat(node, name);
    if (op == "Pad") return zero_pad(node);
    if (op == "ReduceMean") return reduce_mean(node, name);
    refuse(fmt::format("the operator {} is not supported", op));
  }

  // The shape value a tensor holds (computed by an earlier node, or an INT64 constant); none for
  // an activation or a float constant.
  std::optional<ShapeValue> shape_value(const std::string& tensor) const {
    if (auto it = values_.find(tensor); it != values_.end()) return it->second;
    auto it = constants_.find(tensor);
    if (it != constants_.end() && it->second->data_type() == onnx::TensorProto::INT64)
      return shape_value_of_constant(*it->second);
    return std::nullopt;
  }

  // The integers of input `tensor` in role `role` (a Reshape's shape, a Pad's pads): a constant
  // or a shape value.
  ShapeValue integers(const std::string& tensor, const char* role) const {
    auto v = shape_value(tensor);
    if (!v) {
      refuse(fmt::format("its {} '{}' is not a constant (initializer) or integers computed from "
                         "shapes and constants", role, tensor));
    }
    return *v;
  }

  // What ONNX's Shape gives for a tensor: a constant's extents; an activation's [N, C, H, W], or
  // [N, C*H*W] where the graph flattened it (a flatten, fully connected or softmax layer, or a
  // ReduceMean without its kept dimensions).
  ShapeValue onnx_shape(const std::string& tensor) const {
    ShapeValue v;
    if (auto it = constants_.find(tensor); it != constants_.end()) {
      for (int64_t d : tensor_dims(*it->second)) v.values.push_back({d, false});
    } else {
      const std::optional<size_t> layer = read(tensor).main.layer;
      const Activation a = layer ? net_.layers()[*layer].out : net_.input();
      v.values.push_back({1, true});
      if (layer && flat_layers_.contains(*layer)) {
        v.values.push_back({a.C * a.H * a.W, false});
      } else {
        for (int64_t d : {a.C, a.H, a.W}) v.values.push_back({d, false});
      }
    }
    v.dims = {static_cast<int64_t>(v.values.size())};
    return v;
  }

  // The layer just added is 2-D in the graph (N x features).
  void mark_flat() { flat_layers_.insert(net_.layers().size() - 1); }

  void constant_node(const onnx::NodeProto& node) {
    const auto* value = find_attribute(node, "value");
    if (!value || !value->has_t()) refuse("only a Constant with a tensor 'value' is supported");
    constants_[node.output(0)] = &value->t();
  }

  void conv(const onnx::NodeProto& node, const std::string& name) {
    const int64_t group = int_attribute(node, "group", 1);
    if (node.input_size() < 2) refuse("it has no weight input");
    const onnx::TensorProto& w = constant(node.input(1), "weight");
    const Ints wd = tensor_dims(w);
    if (wd.size() != 4)
      refuse(fmt::format(
          "weight '{}' has {} dimensions; only 2-D convolutions (K x C x R x S) are supported",
          w.name(), wd.size()));
    const Padded data = unpadded(node.input(0));
    const Activation in = activation_of(data.tensor);
    if (group < 1 || in.C % group != 0 || wd[0] % group != 0)
      refuse(fmt::format("group={} does not divide the input's C={} and the weight's K={}", group, in.C, wd[0]));
    if (wd[1] * group != in.C)
      refuse(fmt::format("weight '{}' is [{}] but the input has C={}{}", w.name(), fmt::join(wd, ","), in.C,
                         group == 1 ? "" : fmt::format(" in group={} groups", group)));
    const Ints kernel = ints_attribute(node, "kernel_shape", {wd[2], wd[3]});
    if (kernel[0] != wd[2] || kernel[1] != wd[3])
      refuse(fmt::format("kernel_shape=[{}] but the weight is [{}]", fmt::join(kernel, ","),
                         fmt::join(wd, ",")));
    Layer l(LayerKind::conv, name);
    ConvParams& c = l.conv;
    c.K = wd[0];
    c.R = wd[2];
    c.S = wd[3];
    c.groups = group;
    const Ints stride = ints_attribute(node, "strides", {1, 1});
    const Ints dil = ints_attribute(node, "dilations", {1, 1});
    std::tie(c.stride_h, c.stride_w) = std::pair(stride[0], stride[1]);
    std::tie(c.dil_h, c.dil_w) = std::pair(dil[0], dil[1]);
    const Ints& zeros = data.pads;  // a Pad's, before the convolution's own (on the padded input)
    const Ints pads = conv_pads(node, {in.H + zeros[0] + zeros[2], in.W + zeros[1] + zeros[3]},
                                {c.R, c.S}, stride, dil);
    c.pad_top = zeros[0] + pads[0];
    c.pad_left = zeros[1] + pads[1];
    c.pad_bottom = zeros[2] + pads[2];
    c.pad_right = zeros[3] + pads[3];
    OnnxParams p;
    p.weight = w.name();
    if (node.input_size() >= 3 && !node.input(2).empty()) {
      const onnx::TensorProto& b = constant(node.input(2), "bias");
      if (tensor_dims(b) != Ints{c.K})
        refuse(fmt::format("bias '{}' is [{}], not [{}]", b.name(), fmt::join(b.dims(), ","), c.K));
      c.bias = true;
      p.bias = b.name();
    }
    params_[add(std::move(l), read(data.tensor), node.output(0)).name] = p;
  }

  void fully_connected(const onnx::NodeProto& node, const std::string& name, int index) {
    const bool gemm = node.op_type() == "Gemm";
    if (node.input_size() < 2) refuse("it has no weight input");
    if (gemm) {
      if (int_attribute(node, "transA", 0) != 0) refuse("transA=1 is not supported");
      const float alpha = float_attribute(node, "alpha", 1),
                  beta = float_attribute(node, "beta", 1);
      if (alpha != 1 || beta != 1)
        refuse(fmt::format("alpha={} beta={}: only 1 and 1 are supported", alpha, beta));
    }
    const onnx::TensorProto& w = constant(node.input(1), "weight");
    const Ints wd = tensor_dims(w);
    if (wd.size() != 2)
      refuse(fmt::format("weight '{}' is [{}], not a matrix", w.name(), fmt::join(wd, ",")));
    OnnxParams p;
    p.weight = w.name();
    p.weight_transposed = !gemm || int_attribute(node, "transB", 0) == 0;
    const int64_t F = p.weight_transposed ? wd[0] : wd[1];
    Layer l(LayerKind::fully_connected, name);
    l.conv.K = p.weight_transposed ? wd[1] : wd[0];
    const Activation in = activation_of(node.input(0));
    const int64_t features = in.C * in.H * in.W;
    if (F != features)
      refuse(fmt::format("weight '{}' is [{}] but the input has {} features ({})", w.name(),
                         fmt::join(wd, ","), features, in.to_string()));
    std::string bias;
    if (gemm && node.input_size() >= 3 && !node.input(2).empty()) bias = node.input(2);
    const std::string* out = &node.output(0);
    if (!gemm) {  // MatMul: an Add of a constant, its one reader, is the bias
      if (auto add_index = bias_add_after(node, index)) {
        const onnx::NodeProto& a = graph_.node(*add_index);
        bias = a.input(0) == node.output(0) ? a.input(1) : a.input(0);
        out = &a.output(0);
        skip_.insert(*add_index);
      }
    }
    if (!bias.empty()) {
      const onnx::TensorProto& b = constant(bias, "bias");
      const Ints bd = tensor_dims(b);
      if (bd != Ints{l.conv.K} && bd != Ints{1, l.conv.K})
        refuse(fmt::format("bias '{}' is [{}], not [{}]", b.name(), fmt::join(bd, ","), l.conv.K));
      l.conv.bias = true;
      p.bias = b.name();
    }
    const std::string layer = add(std::move(l), node).name;
    mark_flat();
    params_[layer] = p;
    alias(*out, Source{net_.layers().size() - 1});
  }

  // Sigmoid, and PyTorch's Hardsigmoid (alpha = 1/6, beta = 1/2); x * Sigmoid(x) is SiLU and
  // x * HardSigmoid(x) Hardswish (torch exports nn.SiLU and nn.Hardswish so before opset 14): one
  // layer, named after the Mul, when the Mul is the activation's only reader.
  void gate_activation(const onnx::NodeProto& node, const std::string& name, int index) {
    const bool hard = node.op_type() == "HardSigmoid";
    if (hard) {
      const float alpha = float_attribute(node, "alpha", 0.2f), beta = float_attribute(node, "beta", 0.5f);
      if (std::abs(alpha - 1.0f / 6.0f) > 1e-6f || beta != 0.5f)
        refuse(fmt::format("alpha={} beta={} are not supported (only PyTorch's Hardsigmoid: alpha=1/6, "
                           "beta=0.5)", alpha, beta));
    }
    if (const auto j = product_with_input(node, index)) {
      const onnx::NodeProto& mul = graph_.node(*j);
      skip_.insert(*j);
      add(Layer(hard ? LayerKind::hardswish : LayerKind::silu, layer_name(mul, *j)), read(node.input(0)),
          mul.output(0));
      return;
    }
    add(Layer(hard ? LayerKind::hardsigmoid : LayerKind::sigmoid, name), node);
  }

  // The index of the Mul that is the only reader of the node's output and multiplies it by the
  // node's input.
  std::optional<int> product_with_input(const onnx::NodeProto& node, int index) const {
    const auto readers = readers_.find(node.output(0));
    if (readers == readers_.end() || readers->second != 1) return std::nullopt;
    for (int j = index + 1; j < graph_.node_size(); ++j) {
      const onnx::NodeProto& m = graph_.node(j);
      if (m.op_type() != "Mul" || m.input_size() != 2) continue;
      const bool reads = m.input(0) == node.output(0) || m.input(1) == node.output(0);
      if (!reads) continue;
      const std::string& other = m.input(0) == node.output(0) ? m.input(1) : m.input(0);
      return other == node.input(0) ? std::optional<int>(j) : std::nullopt;
    }
    return std::nullopt;
  }

  // Any other Mul of two activations: a scale layer where one is N x C x 1 x 1 and the other
  // N x C x H x W (a squeeze-and-excitation block multiplies by its gate, in either order), the
  // gate a layer's output.
  void product(const onnx::NodeProto& node, const std::string& name) {
    if (node.input_size() != 2) refuse(fmt::format("it has {} inputs, not 2", node.input_size()));
    for (const auto& in : node.input()) {
      if (constants_.contains(in)) refuse(fmt::format("it multiplies by the constant '{}', which is not supported", in));
    }
    const Activation a = activation_of(node.input(0)), b = activation_of(node.input(1));
    const bool b_gates = b == Activation{a.C, 1, 1};
    if (!b_gates && a != Activation{b.C, 1, 1}) {
      refuse(fmt::format("it multiplies N x {} by N x {}, which convgrid does not support (only by a gate of one "
                         "value per sample and channel, N x C x 1 x 1; x * Sigmoid(x), SiLU; x * HardSigmoid(x), "
                         "Hardswish)",
                         a.to_string(), b.to_string()));
    }
    const std::string& gate = node.input(b_gates ? 1 : 0);
    const Read g = read(gate);
    if (!g.main.layer || g.shortcut) {
      refuse(fmt::format("its gate '{}' is {}, not a layer's output", gate,
                         g.shortcut ? "the sum of an Add" : "the graph input"));
    }
    Layer l(LayerKind::scale, name);
    l.gate = net_.layers()[*g.main.layer].name;
    add(std::move(l), read(node.input(b_gates ? 0 : 1)), node.output(0));
  }

  // The index of the Add that is the only reader of a MatMul's output and adds a constant to it.
  std::optional<int> bias_add_after(const onnx::NodeProto& matmul, int index) const {
    const auto readers = readers_.find(matmul.output(0));  // none when nothing reads it
    if (readers == readers_.end() || readers->second != 1) return std::nullopt;
    const std::string& out = matmul.output(0);
    for (int j = index + 1; j < graph_.node_size(); ++j) {
      const onnx::NodeProto& a = graph_.node(j);
      if (a.op_type() != "Add" || a.input_size() != 2) continue;
      if (a.input(0) == out && constants_.contains(a.input(1))) return j;
      if (a.input(1) == out && constants_.contains(a.input(0))) return j;
    }
    return std::nullopt;
  }

  // An Add of two activations: the residual of the one node reading it, or an add layer of its
  // own where it is read by several nodes, by a node of kPassesOn or as the graph output.
  void add_node(const onnx::NodeProto& node, const std::string& name) {
    if (node.input_size() != 2) refuse(fmt::format("it has {} inputs, not 2", node.input_size()));
    for (const auto& in : node.input()) {
      if (constants_.contains(in))
        refuse(fmt::format("it adds the constant '{}' (only a MatMul's bias is supported)", in));
    }
    const Activation a = activation_of(node.input(0)), b = activation_of(node.input(1));
    if (a != b)
      refuse(fmt::format("it adds {} to {} (broadcasting is not supported)", a.to_string(),
                         b.to_string()));
    Source main = read(node.input(0)).main, shortcut = read(node.input(1)).main;
    if (!shortcut.layer) std::swap(main, shortcut);
    if (!shortcut.layer) refuse("it adds the graph input to itself");
    const std::string& out = node.output(0);
    const int readers = readers_.contains(out) ? readers_.at(out) : 0;
    const bool graph_output =
        std::ranges::any_of(graph_.output(), [&](const auto& o) { return o.name() == out; });
    if (readers == 1 && !graph_output && !passed_on_.contains(out)) {
      adds_[out] = {main, shortcut};
      return;
    }
    add(Layer(LayerKind::add, name), Read{main, shortcut}, out);
  }

  // A Concat along channels (axis 1): a concat layer reading its first input, joining the others'
  // channels after it. One input is the identity. DenseNet's k-th layer concatenates the block
  // input and the k - 1 new features, which the (k-1)-th layer's Concat already joined: a Concat
  // whose inputs begin with an earlier Concat's (the longest such) reads that one instead of
  // joining its inputs again, so each new feature map moves into the joined placement once.
  void concat(const onnx::NodeProto& node, const std::string& name) {
    const int64_t axis = int_attribute(node, "axis", 0);
    if (axis != 1 && axis != -3) {
      refuse(fmt::format("axis={} is not supported (only 1: along channels)", axis));
    }
    if (node.input_size() == 1) return alias(node.output(0), read(node.input(0)).main);
    const std::vector<std::string> inputs(node.input().begin(), node.input().end());
    std::string first = inputs[0];
    size_t joined = 1;
    for (const auto& [tensor, earlier] : concats_) {
      const bool prefix = earlier.size() > joined && earlier.size() < inputs.size() &&
                          std::equal(earlier.begin(), earlier.end(), inputs.begin());
      if (prefix) std::tie(first, joined) = std::pair(tensor, earlier.size());
    }
    Layer l(LayerKind::concat, name);
    for (size_t i = joined; i < inputs.size(); ++i) {
      const Source s = read(inputs[i]).main;
      if (!s.layer) {
        refuse(fmt::format("its input {} is the graph input '{}', which in convgrid only the first "
                           "layer may read", i, input_name_));
      }
      l.concat_inputs.push_back(net_.layers()[*s.layer].name);
    }
    add(std::move(l), read(first), node.output(0));
    concats_[node.output(0)] = inputs;
  }

  // A Pad of zeros: the identity where it pads nothing (torch exports one before DenseNet's
  // AveragePool), otherwise rows and columns of zeros that the Conv or AveragePool reading it
  // takes as its own padding (torch exports avg_pool2d's padding, and nn.ZeroPad2d, this way).
  // The pads are an attribute (opset < 11) or a constant input, [N, C, H, W] begins then ends.
  void zero_pad(const onnx::NodeProto& node) {
    std::optional<PadValue> value;
    if (node.input_size() >= 3 && !node.input(2).empty())
      value = PadValue{node.input(2), float_values(constant(node.input(2), "constant_value"))};
    const Ints pads = node.input_size() >= 2 && !node.input(1).empty()
                          ? known_values(integers(node.input(1), "pads"), fmt::format("its pads '{}'", node.input(1)))
                          : ints_attribute(node, "pads").value_or(Ints{});
    const Ints zeros = onnx_zero_pads(node, pads, value);
    if (zeros == Ints{0, 0, 0, 0}) {
      if (pads_.contains(node.input(0))) return void(pads_[node.output(0)] = pads_.at(node.input(0)));
      return alias(node.output(0), read(node.input(0)).main);  // an Add it reads is a layer
    }
    Padded padded = unpadded(node.input(0));  // a Pad of a Pad adds up
    read(padded.tensor);  // refuses an input that is no activation now, naming this node
    for (size_t i = 0; i < zeros.size(); ++i) padded.pads[i] += zeros[i];
    pads_[node.output(0)] = padded;
  }

  // The tensor a node reads and the rows and columns of zeros (top, left, bottom, right) that
  // pending Pads add to it; an activation of its own has none.
  struct Padded {
    std::string tensor;
    Ints pads{0, 0, 0, 0};
  };
  Padded unpadded(const std::string& tensor) const {
    auto it = pads_.find(tensor);
    return it == pads_.end() ? Padded{tensor} : it->second;
  }

  // ReduceMean over rows and columns (torch's x.mean([2, 3]), MNASNet's last pooling): a global
  // average pooling, whose N x C x 1 x 1 output is also the N x C of keepdims=0.
  void reduce_mean(const onnx::NodeProto& node, const std::string& name) {
    const Ints given = node.input_size() >= 2 && !node.input(1).empty()
                           ? known_values(integers(node.input(1), "axes"), fmt::format("its axes '{}'", node.input(1)))
                           : ints_attribute(node, "axes").value_or(Ints{});
    check_mean_over_rows_and_columns(given);
    add(Layer(LayerKind::global_avg_pool, name), node);
    if (int_attribute(node, "keepdims", 1) == 0) mark_flat();
  }

  void batch_norm(const onnx::NodeProto& node, const std::string& name) {
    if (node.input_size() != 5) refuse(fmt::format("it has {} inputs, not 5", node.input_size()));
    const Activation in = activation_of(node.input(0));
    OnnxParams p;
    p.epsilon = float_attribute(node, "epsilon", p.epsilon);
    p.momentum = float_attribute(node, "momentum", p.momentum);
    std::string* fields[] = {&p.scale, &p.shift, &p.mean, &p.var};
    const char* roles[] = {"scale", "bias", "mean", "var"};
    for (int i = 0; i < 4; ++i) {
      const onnx::TensorProto& t = constant(node.input(i + 1), roles[i]);
      if (tensor_dims(t) != Ints{in.C})
        refuse(fmt::format("{} '{}' is [{}], not [{}]", roles[i], t.name(),
                           fmt::join(t.dims(), ","), in.C));
      *fields[i] = t.name();
    }
    params_[add(Layer(LayerKind::batch_norm, name), node).name] = p;
  }

  void pool(const onnx::NodeProto& node, const std::string& name) {
    if (node.op_type() == "GlobalAveragePool") {
      add(Layer(LayerKind::global_avg_pool, name), node);
      return;
    }
    const Padded data = unpadded(node.input(0));
    if (data.pads != Ints{0, 0, 0, 0}) return padded_average_pool(node, name, data);
    const auto pool = onnx_pool_params(node);
    if (!pool) {  // the identity
      if (adds_.contains(node.input(0)))
        refuse("it is the identity on an Add, which must be read by a layer");
      return alias(node.output(0), read(node.input(0)).main);
    }
    Layer l(node.op_type() == "MaxPool" ? LayerKind::max_pool : LayerKind::avg_pool, name);
    l.pool = *pool;
    add(std::move(l), node);
  }

  // An AveragePool of a Pad of zeros: the zeros are input the window averages over, which is
  // convgrid's avg_pool with that padding (it divides by the window, padding included).
  void padded_average_pool(const onnx::NodeProto& node, const std::string& name, const Padded& data) {
    if (node.op_type() != "AveragePool") read(node.input(0));  // refuses, naming the Pad
    const Ints& z = data.pads;
    if (z[0] != z[2] || z[1] != z[3]) {
      refuse(fmt::format("its input '{}' is padded with zeros [{}] (top, left, bottom, right), "
                         "asymmetric; convgrid pools with the same padding on both sides",
                         node.input(0), fmt::join(z, ",")));
    }
    PoolParams p = onnx_pool_params(node).value_or(PoolParams{});
    p.pad_h += z[0];
    p.pad_w += z[1];
    Layer l(LayerKind::avg_pool, name);
    l.pool = p;
    add(std::move(l), read(data.tensor), node.output(0));
  }

  void reshape(const onnx::NodeProto& node, const std::string& name) {
    if (node.input_size() != 2) refuse("it has no shape input");
    // The batch N itself (x.view(x.size(0), -1)) keeps the batch, as 0 does.
    const ShapeValue given = integers(node.input(1), "shape");
    Ints shape;
    for (const ShapeElement& e : given.values) shape.push_back(e.batch ? (e.value == 1 ? 0 : -2) : e.value);
    const Activation in = activation_of(node.input(0));
    const int64_t F = in.C * in.H * in.W;
    const bool batch_ok = shape.size() == 2 && (shape[0] == 0 || shape[0] == -1 || shape[0] > 0);
    const bool features_ok =
        shape.size() == 2 &&
        (shape[1] == F || (shape[1] == -1 && shape[0] <= 0) || (shape[1] == 0 && F == in.C));
    if (!batch_ok || !features_ok) {
      refuse(
          fmt::format("shape {} is not supported: only a Reshape of N x {} to [N, {}] (flatten)",
                      to_string(given), in.to_string(), F));
    }
    add(Layer(LayerKind::flatten, name), node);
    mark_flat();
  }

  void softmax(const onnx::NodeProto& node, const std::string& name) {
    const bool graph_output = std::ranges::any_of(
        graph_.output(), [&](const auto& o) { return o.name() == node.output(0); });
    if (!graph_output)
      refuse("it is not the graph's output (convgrid's softmax_xent is the loss, last)");
    add(Layer(LayerKind::softmax_xent, name), node);
    mark_flat();
  }

  // The per-sample shape of an activation tensor (the graph input or a layer's output).
  Activation activation_of(const std::string& tensor) const {
    const Read r = read(tensor);
    return r.main.layer ? net_.layers()[*r.main.layer].out : net_.input();
  }

  // The graph's one output must be the last layer's; a flat one gets the loss appended.
  void finish() {
    if (graph_.output_size() != 1)
      fail(fmt::format("the graph has {} outputs; a convgrid network has one",
                       graph_.output_size()));
    const std::string& out = graph_.output(0).name();
    if (pads_.contains(out)) {
      fail(fmt::format("the graph output '{}' is a Pad of zeros, which convgrid folds only into a "
                       "Conv or an AveragePool reading it", out));
    }
    auto it = sources_.find(out);
    if (net_.layers().empty() || it == sources_.end() ||
        it->second.layer != net_.layers().size() - 1) {
      fail(fmt::format("the graph output '{}' is not the output of the last layer imported", out));
    }
    const Layer& last = net_.layers().back();
    if (last.kind != LayerKind::softmax_xent && last.out.H == 1 && last.out.W == 1) {
      std::string name = "loss";
      for (int k = 2; net_.find(name); ++k) name = fmt::format("loss_{}", k);
      net_.add(Layer(LayerKind::softmax_xent, name));
    }
  }

  std::string path_;
  const onnx::GraphProto& graph_;
  std::map<std::string, const onnx::TensorProto*> constants_;  // initializers and Constant nodes
  std::string input_name_;
  Network net_;
  std::map<std::string, int> readers_;  // tensor -> how many node inputs and graph outputs read it
  std::set<std::string> passed_on_;     // tensors read by a node of kPassesOn
  std::map<std::string, Source> sources_;
  std::map<std::string, std::vector<std::string>> concats_;  // a concat layer's output -> its inputs
  std::map<std::string, PendingAdd> adds_;
  std::map<std::string, Padded> pads_;  // a Pad's output -> what it pads, and by how much
  std::map<std::string, ShapeValue> values_;  // the shape values nodes computed
  std::set<size_t> flat_layers_;              // layers whose output the graph holds as N x F
  std::set<int> skip_;  // nodes folded into an earlier one (a MatMul's bias Add)
  std::map<std::string, OnnxParams> params_;
};

}  // namespace

bool is_onnx_path(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::ranges::transform(ext, ext.begin(), [](unsigned char c) { return std::tolower(c); });
  return ext == ".onnx";
}

namespace {

// The message with every control character written as \xNN: names and strings of the file
// appear in refusals, which must stay one line whatever the file holds.
std::string printable(std::string_view message) {
  std::string out;
  for (const char c : message) {
    const auto u = static_cast<unsigned char>(c);
    out += u < 0x20 || u == 0x7f ? fmt::format("\\x{:02x}", u) : std::string(1, c);
  }
  return out;
}

}  // namespace

OnnxNetwork import_onnx(const std::string& path, const std::optional<Activation>& input_shape) {
  try {
    const onnx::ModelProto model = read_onnx_model(path);
    return Importer(path, model, input_shape).run();
  } catch (const InputError& e) {
    throw InputError(printable(e.what()));
  }
}

}  // namespace convgrid
