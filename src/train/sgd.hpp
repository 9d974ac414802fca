// Synchronous SGD with momentum and weight decay on sharded parameters (SPEC sections 3 and 8),
// as torch.optim.SGD (dampening 0, no Nesterov) computes it, element by element:
//   g = grad + weight_decay * w;   v = momentum * v + g;   w = w - lr * v
// Every rank updates the part of each tensor it holds; the gradients are already complete there
// (weights: reduce-scattered by the grid algorithm; biases: all-reduced), so no update moves data.
#pragma once

#include <vector>

#include "convgrid/memory.hpp"
#include "train/dist_net.hpp"

namespace convgrid {

struct SgdOptions {
  float lr = 0.02f;
  float momentum = 0.9f;
  float weight_decay = 5e-4f;
};

class Sgd {
 public:
  Sgd(const std::vector<ParamShard>& params, SgdOptions options);

  void step(std::vector<ParamShard>& params);
  const SgdOptions& options() const { return options_; }
  // The rate of the next steps (the Trainer sets each step's from its LrSchedule).
  void set_lr(float lr) { options_.lr = lr; }
  // The momentum of each parameter, in params' order, as this rank holds it.
  std::vector<TrackedVector<float>>& velocity() { return velocity_; }

 private:
  SgdOptions options_;
  std::vector<TrackedVector<float>> velocity_;  // counted by MemoryTracker
};

}  // namespace convgrid
