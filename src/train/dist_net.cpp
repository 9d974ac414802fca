// The distributed network (see dist_net.hpp): the graph's nodes bound in order, forward in order
// and backward in reverse, with each node's words of the step taken from its counters. What each
// layer allocates, as it is bound and in its passes (the algorithms' buffers come with the first
// step), is named for the memory limit.
#include "train/dist_net.hpp"

#include <fmt/format.h>

#include <cstring>
#include <string_view>

#include "convgrid/error.hpp"
#include "sim/compute.hpp"
#include "sim/phase_start.hpp"

namespace convgrid {

std::vector<LayerPlan> plans_for(const std::vector<LayerPlan>& plans, Arithmetic arithmetic,
                                 const Network& net) {
  std::vector<LayerPlan> out = plans;
  if (arithmetic == Arithmetic::fast) return out;
  const std::vector<ComputeLayer> compute = net.compute_layers();
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].panels > 0) {
      const std::string name = i < compute.size() ? net.layers()[compute[i].layer].name : "?";
      throw InputError(
          fmt::format("layer '{}': reproducible arithmetic does not stream (plan of {} panels)",
                      name, out[i].panels));
    }
    out[i].algorithm = ConvAlgorithm::reproducible;
  }
  return out;
}

namespace {

// The step's arena, named for the memory limit (convgrid/memory.hpp).
Buffer allocate_arena(const StepMemoryPlan& plan) {
  const MemoryScope scope("activation arena");
  return Buffer(plan.arena_bytes / static_cast<int64_t>(sizeof(float)));
}

// Names what layer `l` allocates, while binding or in a pass (`what`), for the memory limit.
MemoryScope layer_scope(const TrainLayer& l, std::string_view what) {
  return MemoryScope("layer '", l.name(), "' (", l.kind(), ")", what);
}

}  // namespace

DistNet::DistNet(const Network& net, const std::vector<LayerPlan>& plans, int64_t batch,
                 const Communicator& world, uint64_t seed, Backend backend, Arithmetic arithmetic)
    : world_(world),
      batch_(batch),
      graph_(net, plans_for(plans, arithmetic, net), batch, world.size(), world.rank(), seed,
             backend),
      memory_(plan_step_memory(graph_)),
      arena_(allocate_arena(memory_)) {
  auto& nodes = graph_.nodes();
  std::vector<std::vector<std::byte*>> places(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) places[i].resize(nodes[i].layer->buffers().size());
  auto* base = reinterpret_cast<std::byte*>(arena_.data());
  for (const ArenaSlot& s : memory_.slots) places[s.node][s.buffer] = base + s.offset;
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i].layer->place_activations(std::move(places[i]));
  zero_at_.resize(2 * nodes.size());
  poison_at_.resize(2 * nodes.size());
  for (const ArenaSlot& s : memory_.slots) {
    const size_t t = static_cast<size_t>(s.life.first);
    if (s.zero_at_first) {
      zero_at_[t].push_back({base + s.offset, s.bytes});
    } else if (s.kind != Life::step) {  // the loader fills the step's input before the step
      poison_at_[t].push_back({base + s.offset, s.bytes});
    }
  }
  std::vector<ActivationData> data;
  for (auto& node : graph_.nodes()) {
    const MemoryScope scope = layer_scope(*node.layer, "");
    std::vector<ActivationData> inputs{node.input >= 0 ? data[node.input] : ActivationData{}};
    for (const int operand : node.operands) inputs.push_back(data[operand]);
    data.push_back(node.layer->bind_inputs(world, inputs));
    for (ParamShard& p : node.layer->params()) params_.push_back(p);
    for (ParamShard& p : node.layer->state()) state_.push_back(p);
  }
  input_ = graph_.nodes()[graph_.first_node()].layer->loader_input();
  step_words_.assign(graph_.nodes().size(), {});
  step_seconds_.assign(graph_.nodes().size(), {});
}

DistNet::~DistNet() = default;

XentResult DistNet::step(std::span<const int32_t> labels, std::span<const float> weights,
                         bool train) {
  if (static_cast<int64_t>(labels.size()) != batch_ ||
      static_cast<int64_t>(weights.size()) != batch_) {
    throw Error(fmt::format("step: {} labels and {} weights for a batch of {}", labels.size(),
                            weights.size(), batch_));
  }
  StepContext ctx{labels, weights, train, {}};
  auto& nodes = graph_.nodes();
  const auto words = [](TrafficCounter& t) { return t.traffic().words(); };
  // The buffers whose lives begin at step time t: gradients zeroed, the others poisoned in tests.
  const auto begin_lives = [&](size_t t) {
    if (!sim::kernels_skipped()) {  // model mode reads no value (sim/compute.hpp)
      for (const auto& [p, bytes] : zero_at_[t]) std::memset(p, 0, static_cast<size_t>(bytes));
    }
    if (!poison_) return;
    for (const auto& [p, bytes] : poison_at_[t]) std::memset(p, 0xff, static_cast<size_t>(bytes));  // NaN
  };
  const size_t n = nodes.size();
  for (size_t i = 0; i < n; ++i) {
    TrainLayer& l = *nodes[i].layer;
    const int64_t own = words(l.traffic()), edge = words(l.edge_traffic());
    begin_lives(i);
    const MemoryScope scope = layer_scope(l, " forward");
    const double start = sim::now();
    l.forward(ctx);
    step_seconds_[i] = {sim::now() - start, 0};
    step_words_[i] = {{words(l.traffic()) - own, 0}, {words(l.edge_traffic()) - edge, 0}};
  }
  if (!train) return ctx.loss;
  for (size_t i = nodes.size(); i-- > 0;) {
    TrainLayer& l = *nodes[i].layer;
    const int64_t own = words(l.traffic()), edge = words(l.edge_traffic());
    begin_lives(2 * n - 1 - i);
    const MemoryScope scope = layer_scope(l, " backward");
    const double start = sim::now();
    l.backward(ctx);
    step_seconds_[i].backward = sim::now() - start;
    step_words_[i].own.backward = words(l.traffic()) - own;
    step_words_[i].edge.backward = words(l.edge_traffic()) - edge;
  }
  return ctx.loss;
}

}  // namespace convgrid
