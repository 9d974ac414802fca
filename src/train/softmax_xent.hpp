// Softmax cross-entropy on logits spread over the ranks (SPEC section 8): the logits of a batch
// are an N x K x 1 x 1 activation of which each rank holds one Slice (samples and classes may both
// be split). Per sample, the maximum and the sum of exponentials are reductions over every rank
// holding part of that sample's classes: here one all-reduce over the communicator for each
// (N words max, then 2N words: sums and the target's logit), which every rank of the layer's
// k-fibre and c-fibre joins; ranks that hold none of a sample contribute the identity.
//
// loss = sum over samples n with weight[n] > 0 of weight[n] * (log sum_k exp z[n,k] - z[n,y_n]),
// divided by the sum of the weights (padding samples have weight 0). The gradient,
// weight[n] / sum(weights) * (softmax(z)[n,k] - [k == y_n]), is written over the logits' slice.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/traffic.hpp"
#include "layout/box.hpp"

namespace convgrid {

struct XentResult {
  double loss = 0;        // weighted mean over the batch (the same on every rank)
  int64_t correct = 0;    // samples of positive weight whose largest logit is the label's
  double weight = 0;      // sum of the weights
};

// `labels` and `weights` cover the whole batch (N entries each) on every rank; `grad` (same
// storage as `logits`) receives the gradient of the loss.
XentResult softmax_xent(const Communicator& comm, const Slice& slice, const float* logits,
                        std::span<const int32_t> labels, std::span<const float> weights,
                        float* grad, TrafficCounter& traffic);

}  // namespace convgrid
