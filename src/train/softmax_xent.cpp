// Softmax cross-entropy over a spread of the logits (see softmax_xent.hpp). The predicted class
// of a sample is the smallest class index holding its maximum (an all-reduce min of indices).
#include "train/softmax_xent.hpp"

#include <cmath>
#include <limits>

#include "comm/collectives.hpp"

namespace convgrid {

XentResult softmax_xent(const Communicator& comm, const Slice& slice, const float* logits,
                        std::span<const int32_t> labels, std::span<const float> weights,
                        float* grad, TrafficCounter& traffic) {
  const int64_t N = static_cast<int64_t>(labels.size());
  const float lowest = -std::numeric_limits<float>::infinity();
  std::vector<float> max(N, lowest);
  // Runs of a logits slice: (n, k, 0, 0) with one element each, or a run along k when flat.
  const auto each = [&](auto&& f) {
    for_each_run(slice, [&](int64_t n, int64_t k, int64_t, int64_t x0, int64_t x1, int64_t off) {
      for (int64_t i = 0; i < x1 - x0; ++i) f(n, k, off + i);  // x1 - x0 == 1: logits are 1 x 1
    });
  };
  each([&](int64_t n, int64_t, int64_t i) { max[n] = std::max(max[n], logits[i]); });
  all_reduce_max(comm, max, traffic);

  std::vector<float> sums(2 * N, 0.0f);  // sum of exp(z - max), then the label's logit
  std::vector<float> first(N, std::numeric_limits<float>::max());  // first class at the max
  each([&](int64_t n, int64_t k, int64_t i) {
    sums[n] += std::exp(logits[i] - max[n]);
    if (k == labels[n]) sums[N + n] = logits[i];
    if (logits[i] == max[n]) first[n] = std::min(first[n], static_cast<float>(k));
  });
  all_reduce_sum(comm, sums, traffic);
  all_reduce_min(comm, first, traffic);

  XentResult r;
  double total = 0;
  for (int64_t n = 0; n < N; ++n) {
    if (weights[n] <= 0) continue;
    r.weight += weights[n];
    total += weights[n] * (std::log(static_cast<double>(sums[n])) + max[n] - sums[N + n]);
    if (static_cast<int32_t>(first[n]) == labels[n]) ++r.correct;
  }
  r.loss = r.weight > 0 ? total / r.weight : 0.0;
  const float scale = r.weight > 0 ? static_cast<float>(1.0 / r.weight) : 0.0f;
  each([&](int64_t n, int64_t k, int64_t i) {
    const float p = std::exp(logits[i] - max[n]) / sums[n];
    grad[i] = weights[n] * scale * (p - (k == labels[n] ? 1.0f : 0.0f));
  });
  return r;
}

}  // namespace convgrid
