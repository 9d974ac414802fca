// The memory model of training: the buffers every layer of the TrainGraph describes (the same
// descriptions the running layers allocate from), added up by group; the activation buffers are
// the arena of the step's memory plan, as DistNet allocates it (train/step_memory.hpp).
#include "train/training_memory.hpp"

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "train/step_memory.hpp"
#include "train/train_graph.hpp"

namespace convgrid {

namespace {

TrainingMemory of_rank(const Network& net, const std::vector<LayerPlan>& plans, int64_t batch, int64_t procs,
                       int64_t rank, Backend engine, JobCache* cache, ArenaMemo* arenas) {
  if (rank < 0 || rank >= procs) throw InputError(fmt::format("rank {} of {} ranks", rank, procs));
  const TrainGraph graph(net, plans, batch, procs, rank, 0, engine, cache);
  TrainingMemory m;
  m.activations = step_arena_bytes(graph, arenas);
  for (const auto& node : graph.nodes()) {
    for (const BufferSpec& b : node.layer->buffers()) {
      switch (b.group) {
        case MemoryGroup::activations:
          if (b.life == Life::persistent) m.activations += b.bytes;
          break;
        case MemoryGroup::parameters:
          m.parameters += b.bytes;
          break;
        case MemoryGroup::exchanges:
          m.exchanges += b.bytes;
          break;
        case MemoryGroup::layers:
          m.layers += b.bytes;
          break;
      }
    }
  }
  return m;
}

}  // namespace

TrainingMemory training_memory(const Network& net, const std::vector<LayerPlan>& plans,
                               int64_t batch, int64_t procs, int64_t rank, Backend engine) {
  return of_rank(net, plans, batch, procs, rank, engine, nullptr, nullptr);
}

TrainingMemory busiest_training_memory(const Network& net, const std::vector<LayerPlan>& plans,
                                       int64_t batch, int64_t procs, Backend engine) {
  TrainingMemory busiest;
  JobCache cache;  // found on the first rank, the same for every other
  ArenaMemo arenas;
  for (int64_t r = 0; r < procs; ++r) {
    const TrainingMemory m = of_rank(net, plans, batch, procs, r, engine, &cache, &arenas);
    if (r == 0 || m.total() > busiest.total()) busiest = m;
  }
  return busiest;
}

}  // namespace convgrid
