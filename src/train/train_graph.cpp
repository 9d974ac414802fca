// Building the nodes: readers of every output first (an input read once only may be used in
// place), then each layer with its inputs' spreads.
#include "train/train_graph.hpp"

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "layout/layer_layout.hpp"
#include "train/layer_registry.hpp"

namespace convgrid {
namespace {

// How many reads there are of each layer's output (as input, residual or concat operand; a concat
// naming a layer twice reads it twice); the last entry: the network input's readers.
std::vector<int> reader_counts(const Network& net) {
  const size_t L = net.layers().size();
  std::vector<int> readers(L + 1, 0);
  for (size_t i = 0; i < L; ++i) {
    for (const std::optional<size_t>& p : net.operands(i)) ++readers[p ? *p : L];
  }
  return readers;
}

}  // namespace

void check_trainable(const Network& net) {
  const auto& layers = net.layers();
  const size_t L = layers.size();
  if (L == 0 || layers.back().kind != LayerKind::softmax_xent) {
    throw InputError(
        fmt::format("network '{}' does not end with a softmax_xent layer; training "
                    "needs the loss last",
                    net.name()));
  }
  if (L < 2 || !is_compute(layers[L - 2].kind)) {
    throw InputError(
        fmt::format("network '{}': the layer before the loss must be a conv or fc "
                    "layer (its output is the logits)",
                    net.name()));
  }
  // A residual, a concat operand or a gate that is the network input (a layer's input is checked
  // below).
  for (size_t i = 0; i < L; ++i) {
    const std::vector<std::optional<size_t>> operands = net.operands(i);
    const bool concat = layers[i].kind == LayerKind::concat;
    for (size_t j = concat ? 0 : 1; j < operands.size(); ++j) {
      const std::optional<size_t> r = operands[j];
      const bool gate = layers[i].kind == LayerKind::scale && j + 1 == operands.size();
      const char* role = concat ? "concat operand" : gate ? "gate" : "residual";
      if (r && (layers[*r].kind != LayerKind::flatten || net.producer(*r))) continue;
      throw InputError(fmt::format(
          "layer '{}': its {} '{}' is the network input, which training feeds to the first layer "
          "only",
          layers[i].name, role, r ? layers[*r].name : "input"));
    }
  }
  // The network input: read by one layer, a compute layer or a flatten read by one compute layer.
  const std::vector<int> readers = reader_counts(net);  // readers[L]: of the network input
  bool fed = false;
  for (size_t i = 0; i < L && !fed; ++i) {
    const Layer& layer = layers[i];
    const std::optional<size_t> p = net.producer(i);
    const bool reads_input = !p || (layers[*p].kind == LayerKind::flatten && !net.producer(*p));
    if (!reads_input) continue;
    const bool through_flatten = p.has_value();
    const bool ok =
        readers[L] == 1 && (!through_flatten || readers[*p] == 1) && layer.residual.empty() &&
        (is_compute(layer.kind) || (layer.kind == LayerKind::flatten && !through_flatten));
    if (!ok) {
      throw InputError(fmt::format(
          "layer {} '{}' ({}) reads the network input: training feeds the input to one convolution "
          "or fully connected layer (a flatten may come first), which no other layer reads",
          i, layer.name, to_string(layer.kind)));
    }
    fed = is_compute(layer.kind);
  }
}

TrainGraph::TrainGraph(const Network& net, const std::vector<LayerPlan>& plans, int64_t batch,
                       int64_t procs, int64_t rank, uint64_t seed, Backend engine,
                       JobCache* cache) {
  check_trainable(net);
  const auto& layers = net.layers();
  const size_t L = layers.size();
  const size_t kInput = L;  // readers[kInput]: of the network input
  const std::vector<int> readers = reader_counts(net);
  const size_t compute_count = net.compute_layers().size();
  if (plans.size() != compute_count) {
    throw InputError(fmt::format("{} plans for the {} compute layers of '{}'", plans.size(),
                                 compute_count, net.name()));
  }
  std::vector<int> out_node(L, -1);  // the node holding each layer's output; -1: the network input
  size_t ci = 0;
  bool first_seen = false;
  const auto spread_of = [&](int node) -> const ActivationSpread* {
    return node < 0 ? nullptr : &nodes_[node].layer->output();
  };
  for (size_t i = 0; i < L; ++i) {
    const Layer& layer = layers[i];
    const std::optional<size_t> p = net.producer(i);
    int in = p ? out_node[*p] : -1;
    const int input_readers = p ? readers[*p] : readers[kInput];
    LayerSetup s{&net, i, batch, procs, rank, seed, engine};
    s.cache = cache;
    if (in < 0) {
      // The network input (maybe flattened): read by the first compute layer alone.
      const bool flatten = layer.kind == LayerKind::flatten;
      if (first_seen || input_readers != 1 || !(flatten || is_compute(layer.kind))) {
        throw Error(fmt::format("layer '{}' reads the network input (check_trainable lets it)",
                                layer.name));
      }
      if (flatten) continue;  // a view of the input: out_node stays -1
      first_seen = true;
    }
    if (!layer.residual.empty()) {
      const size_t r = *net.find(layer.residual);
      if (out_node[r] < 0) {
        throw Error(
            fmt::format("layer '{}' adds the network input (check_trainable lets it)", layer.name));
      }
      LayerSetup add = s;
      add.input = spread_of(in);
      add.sole_reader = input_readers == 1;
      add.operands = {{spread_of(out_node[r]), readers[r] == 1}};
      nodes_.push_back({make_residual_add(add), in, {out_node[r]}, i, std::nullopt});
      in = static_cast<int>(nodes_.size()) - 1;
      s.sole_reader = true;
    } else {
      s.sole_reader = input_readers == 1;
    }
    s.input = spread_of(in);
    Node node{nullptr, in, {}, i, std::nullopt};
    // The other operands: a concat's inputs, a scale's gate (no list built: every rank's graph
    // of the memory model runs this).
    const auto operand = [&](const std::string& ref) {
      const size_t r = *net.find(ref);
      if (out_node[r] < 0) {
        throw Error(
            fmt::format("layer '{}' joins the network input (check_trainable lets it)", layer.name));
      }
      s.operands.push_back({spread_of(out_node[r]), readers[r] == 1});
      node.operands.push_back(out_node[r]);
    };
    for (const std::string& ref : layer.concat_inputs) operand(ref);
    if (!layer.gate.empty()) operand(layer.gate);
    if (is_compute(layer.kind)) {
      s.plan = &plans[ci];
      node.compute_index = ci++;
    }
    node.layer = make_train_layer(s);
    if (in < 0) {
      first_node_ = nodes_.size();
      input_tensor_ = input_box(s.plan->shape);
      input_slice_ = LayerLayout(s.plan->shape, s.plan->grid).in_slice(s.plan->grid.coord_of(rank));
    }
    nodes_.push_back(std::move(node));
    out_node[i] = static_cast<int>(nodes_.size()) - 1;
  }
  if (!first_seen) throw Error(fmt::format("network '{}': no layer read the input", net.name()));
}

}  // namespace convgrid
