// A network distributed layer by layer (SPEC section 8): every convolution and fully connected
// layer runs the grid algorithm (or its streamed form) on the grid its plan chose; ReLU works on
// whatever each rank holds; pooling runs in the distribution of the convolution before it
// (Placement::pooled_output_of) after gathering its window halos; flatten is a change of view;
// between two compute layers one all-to-all moves the activation into the next layer's input
// distribution (and its gradient back). The loss is softmax cross-entropy over the last layer's
// output distribution.
//
// What moves, per step (each counted in its own TrafficCounter):
//   conv            the grid algorithm's gathers, halos and reduce-scatters (model/grid_volume)
//   redistribution  In of each compute layer from the previous activation's spread, and dIn back
//                   (model/redistribution: equal to the planner's edges)
//   pooling         window halos of pooling layers, and their gradients back
//   reductions      bias gradients (all-reduce of K over all ranks; K doubles when reproducible)
//                   and the loss's reductions
//
// Parameters are sharded: a layer's weights are its grid's at-rest Ker slices (each element on
// one rank), biases are replicated (K values, all-reduced gradients, identical updates). Initial
// values depend on the seed only, not on the grid or the number of ranks.
// With Arithmetic::reproducible every plan must be data-parallel (P,1,1,1,1, not streamed).
// Supported: a chain of layers (no `input` or `residual` references) whose first layer is a
// convolution or fully connected layer (a flatten may come first) and whose last is the loss.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/traffic.hpp"
#include "convgrid/local_conv.hpp"
#include "layout/box.hpp"
#include "nn/network.hpp"
#include "plan/layer_planner.hpp"
#include "train/softmax_xent.hpp"

namespace convgrid {

// One parameter tensor as this rank holds it: its part (`slice`) of the global tensor `global`
// (a box from the origin: KCRS for weights, K x 1 x 1 x 1 for a bias), the values, the gradient
// of the last step, and whether every rank holds the whole of it (biases).
struct ParamShard {
  std::string name;  // "<layer>.weight" or "<layer>.bias"
  Box4 global;
  Slice slice;
  bool replicated = false;
  std::span<float> value, grad;
};

// How the layers add up: `fast` runs each layer's planned grid with oneDNN on whole blocks (sums
// over ranks and blocks in whatever order the grid gives); `reproducible` runs every compute
// layer data-parallel with per-sample kernels and double-precision sums over samples
// (algo/reproducible_conv.hpp), so that a run gives the same bits on any number of ranks.
enum class Arithmetic { fast, reproducible };

struct NetTraffic {
  TrafficCounter conv, redistribution, pooling, reductions;
};

class DistNet {
 public:
  // `plans` holds one LayerPlan per compute layer, in order (NetworkPlan::layers' plans). Throws
  // InputError for a network this class does not run (see above) or plans that do not match it.
  DistNet(const Network& net, const std::vector<LayerPlan>& plans, int64_t batch,
          const Communicator& world, uint64_t seed, Backend backend = Backend::onednn,
          Arithmetic arithmetic = Arithmetic::fast);
  ~DistNet();
  DistNet(const DistNet&) = delete;
  DistNet& operator=(const DistNet&) = delete;

  int64_t batch() const { return batch_; }
  // The network input as this rank holds it (the first compute layer's In slice, in that layer's
  // view of the input: N x C x H x W, or N x C*H*W x 1 x 1 when it is fully connected), to be
  // filled before forward().
  const Box4& input_tensor() const { return input_tensor_; }
  const Slice& input_slice() const { return input_slice_; }
  float* input() { return input_; }

  // Forward, the loss over the batch (labels and weights: batch() entries each; weight 0 marks a
  // padding sample), and when `train` the backward passes, leaving every ParamShard::grad set.
  XentResult step(std::span<const int32_t> labels, std::span<const float> weights, bool train);

  std::vector<ParamShard>& params() { return params_; }
  NetTraffic& traffic() { return traffic_; }
  // Redistribution words this rank received into each compute layer in the last step, forward
  // (activation) and backward (gradient), in compute-layer order (the first layer has none).
  struct EdgeWords {
    int64_t forward = 0, backward = 0;
  };
  const std::vector<EdgeWords>& edge_words() const { return edge_words_; }
  // The same from the model (model/redistribution.hpp): the busiest rank's words in each
  // direction, over all ranks (what the planner adds for the edge).
  const std::vector<EdgeWords>& modelled_edge_words() const { return model_edges_; }

  struct Stage;

 private:
  const Communicator& world_;
  int64_t batch_;
  std::vector<std::unique_ptr<Stage>> stages_;
  std::vector<ParamShard> params_;
  NetTraffic traffic_;
  std::vector<EdgeWords> edge_words_, model_edges_;
  Box4 input_tensor_;
  Slice input_slice_;
  float* input_ = nullptr;
};

}  // namespace convgrid
