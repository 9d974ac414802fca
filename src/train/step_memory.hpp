// The memory plan of one training step on one rank: every activation buffer of the rank's
// TrainGraph gets the step times of its life (train/train_layer.hpp, Lives) and a place in one
// arena, where buffers whose lives do not meet share bytes. The running network (DistNet)
// allocates the arena and hands each layer its places; the memory model (training_memory) takes
// the arena's size from the same plan. Pure; no MPI.
//
// Step times: with n nodes, node i's forward runs at time i and its backward at 2n - 1 - i. A
// node's output storage (values and gradient) is shared by the in-place nodes after it (ReLU,
// flatten, an add, the loss); its values live from its forward to the last pass that reads them
// (a reader's forward, or backward when the reader's StorageUse says so of its input; a
// shortcut or a concat operand is read in forward only), and its gradient from
// the first pass that writes it (a reader's backward, or the loss's forward) to the node's own
// backward, and is zeroed as its life begins.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "train/train_graph.hpp"

namespace convgrid {

// Places in the arena start at multiples of this (a cache line, an AVX-512 vector).
inline constexpr int64_t kArenaAlign = 64;

// A block of `bytes` needed from step time `first` to `last`, inclusive.
struct Interval {
  int64_t bytes = 0;
  int first = 0, last = 0;
};

// Offsets for the intervals such that two whose times meet do not overlap in bytes: the largest
// first, each at the lowest offset free over its whole life. Returns the offsets; `*total` is the
// arena's size (the end of the highest block). Offsets are multiples of kArenaAlign when the
// sizes are.
std::vector<int64_t> place_intervals(const std::vector<Interval>& blocks, int64_t* total);

// One activation buffer's place.
struct ArenaSlot {
  size_t node = 0, buffer = 0;  // the node and its described buffer (TrainLayer::buffers())
  int64_t bytes = 0;            // as described
  Interval life;                // bytes rounded up to kArenaAlign
  int64_t offset = 0;
  bool zero_at_first = false;   // an output's gradient: zeroed as its life begins
  Life kind = Life::step;
};

struct StepMemoryPlan {
  std::vector<ArenaSlot> slots;
  int64_t arena_bytes = 0;
  int64_t live_peak_bytes = 0;  // the most bytes live at one time: the arena's lower bound
  int64_t described_bytes = 0;  // all activation buffers added up: the arena without reuse
};

StepMemoryPlan plan_step_memory(const TrainGraph& graph);

// place_intervals's arena sizes, remembered by their blocks: the graphs of one job's ranks often
// have the same buffers (the memory model builds one for each rank). Keeps at most kEntries.
class ArenaMemo {
 public:
  static constexpr size_t kEntries = 4096;
  int64_t arena_bytes(const std::vector<Interval>& blocks);

 private:
  std::map<std::vector<int64_t>, int64_t> known_;  // bytes, first and last of each block
};

// plan_step_memory(graph).arena_bytes, through `memo` when there is one.
int64_t step_arena_bytes(const TrainGraph& graph, ArenaMemo* memo = nullptr);

}  // namespace convgrid
