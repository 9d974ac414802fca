// Lives of the activation buffers and their places in the arena (see step_memory.hpp).
#include "train/step_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "convgrid/error.hpp"

namespace convgrid {

std::vector<int64_t> place_intervals(const std::vector<Interval>& blocks, int64_t* total) {
  std::vector<size_t> order(blocks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (blocks[a].bytes != blocks[b].bytes) return blocks[a].bytes > blocks[b].bytes;
    return blocks[a].first < blocks[b].first;
  });
  std::vector<int64_t> offset(blocks.size(), 0);
  std::vector<size_t> placed;
  int64_t end = 0;
  std::vector<std::pair<int64_t, int64_t>> taken;  // [offset, offset + bytes)
  for (size_t i : order) {
    const Interval& b = blocks[i];
    // The placed blocks whose lives meet this one's, by offset: take the lowest gap that fits.
    taken.clear();
    for (size_t j : placed) {
      const Interval& o = blocks[j];
      if (o.first <= b.last && b.first <= o.last) taken.emplace_back(offset[j], offset[j] + o.bytes);
    }
    std::sort(taken.begin(), taken.end());
    int64_t at = 0;
    for (const auto& [lo, hi] : taken) {
      if (lo - at >= b.bytes) break;
      at = std::max(at, hi);
    }
    offset[i] = at;
    end = std::max(end, at + b.bytes);
    placed.push_back(i);
  }
  *total = end;
  return offset;
}

namespace {

int64_t aligned(int64_t bytes) { return (bytes + kArenaAlign - 1) / kArenaAlign * kArenaAlign; }

// The lives of each node's output values and gradient (by the node that owns the storage).
struct OutputLives {
  std::vector<Interval> values, grad;
};

OutputLives output_lives(const std::vector<TrainGraph::Node>& nodes) {
  const int n = static_cast<int>(nodes.size());
  const auto fwd = [](int i) { return i; };
  const auto bwd = [n](int i) { return 2 * n - 1 - i; };
  // The node owning each node's output storage: itself, or for an in-place node its input's.
  std::vector<int> root(nodes.size());
  for (int i = 0; i < n; ++i) {
    const bool in_place = nodes[i].layer->in_place() && nodes[i].input >= 0;
    root[i] = in_place ? root[nodes[i].input] : i;
  }
  OutputLives lives;
  for (int i = 0; i < n; ++i) {
    lives.values.push_back({0, fwd(i), fwd(i)});
    lives.grad.push_back({0, bwd(i), bwd(i)});
  }
  const auto reach = [](Interval& life, int t) {
    life.first = std::min(life.first, t);
    life.last = std::max(life.last, t);
  };
  for (int j = 0; j < n; ++j) {
    const StorageUse use = nodes[j].layer->storage_use();
    const int own = root[j];
    // A node reads and writes its own output storage in its passes (in place: its root's).
    reach(lives.values[own], fwd(j));
    if (use.reads_output_in_backward) reach(lives.values[own], bwd(j));
    reach(lives.grad[own], bwd(j));
    // As a reader of its input and its other operands (not itself when in place: counted above).
    if (nodes[j].input >= 0) {
      const int r = root[nodes[j].input];
      reach(lives.values[r], fwd(j));
      if (use.reads_input_in_backward) reach(lives.values[r], bwd(j));
      reach(lives.grad[r], use.writes_input_grad_in_forward ? fwd(j) : bwd(j));
    }
    for (const int operand : nodes[j].operands) {  // read in forward, gradient added in backward
      const int r = root[operand];
      reach(lives.values[r], fwd(j));
      reach(lives.grad[r], bwd(j));
    }
  }
  return lives;
}

// Every activation buffer's slot with its life, not yet placed, and the bytes described.
StepMemoryPlan unplaced(const TrainGraph& graph) {
  const std::vector<TrainGraph::Node>& nodes = graph.nodes();
  const int n = static_cast<int>(nodes.size());
  const OutputLives lives = output_lives(nodes);
  StepMemoryPlan plan;
  for (int i = 0; i < n; ++i) {
    const std::vector<BufferSpec>& specs = nodes[i].layer->buffers();
    for (size_t b = 0; b < specs.size(); ++b) {
      const BufferSpec& s = specs[b];
      if (s.life == Life::persistent) continue;
      if (s.group != MemoryGroup::activations) {
        throw Error(fmt::format("layer '{}': buffer '{}' has a life but is not an activation",
                                nodes[i].layer->name(), s.role));
      }
      ArenaSlot slot{static_cast<size_t>(i), b, s.bytes, {aligned(s.bytes), 0, 0}, 0, false, s.life};
      switch (s.life) {
        case Life::step:
          slot.life.first = 0;
          slot.life.last = 2 * n - 1;
          break;
        case Life::output_values:
          slot.life.first = lives.values[i].first;
          slot.life.last = lives.values[i].last;
          break;
        case Life::output_grad:
          slot.life.first = lives.grad[i].first;
          slot.life.last = lives.grad[i].last;
          slot.zero_at_first = true;
          break;
        case Life::forward_to_backward:
          slot.life.first = i;
          slot.life.last = 2 * n - 1 - i;
          break;
        case Life::forward:
          slot.life.first = slot.life.last = i;
          break;
        case Life::backward:
          slot.life.first = slot.life.last = 2 * n - 1 - i;
          break;
        case Life::persistent:
          break;
      }
      plan.described_bytes += s.bytes;
      plan.slots.push_back(slot);
    }
  }
  return plan;
}

std::vector<Interval> lives_of(const StepMemoryPlan& plan) {
  std::vector<Interval> blocks;
  blocks.reserve(plan.slots.size());
  for (const ArenaSlot& s : plan.slots) blocks.push_back(s.life);
  return blocks;
}

}  // namespace

StepMemoryPlan plan_step_memory(const TrainGraph& graph) {
  StepMemoryPlan plan = unplaced(graph);
  const int n = static_cast<int>(graph.nodes().size());
  const std::vector<Interval> blocks = lives_of(plan);
  const std::vector<int64_t> offsets = place_intervals(blocks, &plan.arena_bytes);
  for (size_t k = 0; k < plan.slots.size(); ++k) plan.slots[k].offset = offsets[k];
  for (int t = 0; t < 2 * n; ++t) {
    int64_t live = 0;
    for (const Interval& b : blocks) live += b.first <= t && t <= b.last ? b.bytes : 0;
    plan.live_peak_bytes = std::max(plan.live_peak_bytes, live);
  }
  return plan;
}

int64_t ArenaMemo::arena_bytes(const std::vector<Interval>& blocks) {
  std::vector<int64_t> key;
  key.reserve(3 * blocks.size());
  for (const Interval& b : blocks) key.insert(key.end(), {b.bytes, b.first, b.last});
  if (const auto it = known_.find(key); it != known_.end()) return it->second;
  int64_t total = 0;
  place_intervals(blocks, &total);
  if (known_.size() < kEntries) known_.emplace(std::move(key), total);
  return total;
}

int64_t step_arena_bytes(const TrainGraph& graph, ArenaMemo* memo) {
  const std::vector<Interval> blocks = lives_of(unplaced(graph));
  if (memo != nullptr) return memo->arena_bytes(blocks);
  int64_t total = 0;
  place_intervals(blocks, &total);
  return total;
}

}  // namespace convgrid
