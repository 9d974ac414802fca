// The all-reduces of a training step beyond its layers' passes, the moves between layers and
// batch normalization, each over all P ranks (SPEC section 8):
//
//   loss    softmax cross-entropy over logits spread over the ranks (train/softmax_xent.hpp):
//           all-reduces of N floats (each sample's largest logit), 2N (the sums of exponentials
//           and the label's logit) and N (the first class at the largest), N the batch
//   biases  each convolution or fully connected layer with a bias: its gradient, K floats
//           (train/layers/conv_layer.cpp)
//
// Words as the communication layer counts an all-reduce (comm/volume.hpp), the busiest rank's:
// rank 0's, whose balanced block is the largest. Time: the rounds of the algorithm Open MPI picks
// (model/collective_rounds.hpp), each moving what that algorithm moves, a round over the node's
// links where it pairs ranks of one node. Ranks fill nodes in order, so exchanges at distances
// 1, 2, 4, ... below the node's size (a power of two that divides P) stay inside nodes; otherwise
// every round is charged to the network. Inference runs none of them. Pure; no MPI.
#pragma once

#include <cstdint>
#include <vector>

#include "model/grid_volume.hpp"
#include "model/machine_profile.hpp"

namespace convgrid {

// The load of one all-reduce of `floats` floats over `q` consecutive ranks (the time model's
// figures: rounds and the words they move, by link), q >= 1.
CommLoad all_reduce_load(int64_t q, int64_t floats, int64_t ranks_per_node);

struct StepCollectives {
  int64_t loss_words = 0, bias_words = 0;  // the busiest rank's
  double loss_time_s = 0, bias_time_s = 0;
  int64_t words() const { return loss_words + bias_words; }
  double time_s() const { return loss_time_s + bias_time_s; }
};

// The step's loss (when `loss`) at `batch` and the biases of `bias_sizes` floats each, over
// `procs` ranks.
StepCollectives step_collectives(bool loss, int64_t batch, const std::vector<int64_t>& bias_sizes,
                                 int64_t procs, const MachineProfile& profile);

}  // namespace convgrid
