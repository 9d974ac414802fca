// A network distributed layer by layer (SPEC section 8): the nodes of a TrainGraph
// (train/train_graph.hpp) bound to the communicator, run forward in network order and backward
// in reverse. Every compute layer runs the convolution its plan names on the plan's grid; the
// other layers run where their input lies (train/layers/*.cpp say what each moves).
//
// Parameters are sharded (each layer's params()); their initial values depend on the seed only,
// not on the grid or the number of ranks. With Arithmetic::reproducible every compute layer runs
// the reproducible data-parallel algorithm (algo/reproducible_conv.hpp): its plans must be
// data-parallel and not streamed.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"
#include "convgrid/local_conv.hpp"
#include "nn/network.hpp"
#include "plan/layer_planner.hpp"
#include "train/softmax_xent.hpp"
#include "train/step_memory.hpp"
#include "train/train_graph.hpp"
#include "train/train_layer.hpp"

namespace convgrid {

// How the layers add up: `fast` runs each layer's planned algorithm with oneDNN on whole blocks;
// `reproducible` gives the same bits on any number of ranks (data-parallel, per-sample kernels,
// double sums).
enum class Arithmetic { fast, reproducible };

// `plans` with every algorithm set for `arithmetic`. Throws InputError for a streamed plan under
// reproducible arithmetic.
std::vector<LayerPlan> plans_for(const std::vector<LayerPlan>& plans, Arithmetic arithmetic,
                                 const Network& net);

class DistNet {
 public:
  // `plans` holds one LayerPlan per compute layer, in order (NetworkPlan::layers' plans). Throws
  // InputError for a network TrainGraph does not run or plans that do not match it.
  DistNet(const Network& net, const std::vector<LayerPlan>& plans, int64_t batch,
          const Communicator& world, uint64_t seed, Backend backend = Backend::onednn,
          Arithmetic arithmetic = Arithmetic::fast);
  ~DistNet();
  DistNet(const DistNet&) = delete;
  DistNet& operator=(const DistNet&) = delete;

  int64_t batch() const { return batch_; }
  // The network input as this rank holds it (the first compute layer's In slice, in that layer's
  // view of the input: N x C x H x W, or N x C*H*W x 1 x 1 when it is fully connected), to be
  // filled before step().
  const Box4& input_tensor() const { return graph_.input_tensor(); }
  const Slice& input_slice() const { return graph_.input_slice(); }
  float* input() { return input_; }

  // Forward, the loss over the batch (labels and weights: batch() entries each; weight 0 marks a
  // padding sample), and when `train` the backward passes, leaving every ParamShard::grad set.
  // `train` false: inference (batch normalization uses its running statistics).
  XentResult step(std::span<const int32_t> labels, std::span<const float> weights, bool train);

  // Tests: fill every other activation buffer with NaN as its life begins (bytes 0xff), so that a
  // pass reading a buffer before it is written, or after its bytes went to another, shows.
  void poison_buffers_as_lives_begin(bool on) { poison_ = on; }

  // Trainable parameters, and state that is checkpointed but not trained (running statistics).
  std::vector<ParamShard>& params() { return params_; }
  std::vector<ParamShard>& state() { return state_; }

  // The layers, in the order they run.
  const std::vector<TrainGraph::Node>& nodes() const { return graph_.nodes(); }
  // Words each node received in the last step, forward and backward: in its own work and in
  // delivering its inputs (to compare with TrainLayer::modelled_words and modelled_edge_words).
  struct NodeWords {
    LayerWords own, edge;
  };
  const std::vector<NodeWords>& last_step_words() const { return step_words_; }
  // Seconds each node took in the last step on this rank (sim::now: simulated under SMPI),
  // forward and backward, its inputs' moves included; with the other nodes they make the step.
  struct NodeSeconds {
    double forward = 0, backward = 0;
  };
  const std::vector<NodeSeconds>& last_step_seconds() const { return step_seconds_; }

 private:
  const Communicator& world_;
  int64_t batch_;
  TrainGraph graph_;
  StepMemoryPlan memory_;
  Buffer arena_;  // every activation buffer, at its place in memory_
  std::vector<std::vector<std::pair<std::byte*, int64_t>>> zero_at_;  // by step time: gradients
  std::vector<std::vector<std::pair<std::byte*, int64_t>>> poison_at_;  // by step time: the others
  bool poison_ = false;
  std::vector<ParamShard> params_, state_;
  std::vector<NodeWords> step_words_;
  std::vector<NodeSeconds> step_seconds_;
  float* input_ = nullptr;
};

}  // namespace convgrid
