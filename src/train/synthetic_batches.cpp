// Synthetic batches: seeded inputs and labels (see synthetic_batches.hpp).
#include "train/synthetic_batches.hpp"

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "io/seeded_tensor.hpp"

namespace convgrid {

SyntheticBatchSource::SyntheticBatchSource(int64_t count, int64_t batch, uint64_t seed,
                                           int64_t classes)
    : count_(count), batch_(batch), seed_(seed), classes_(classes) {
  if (count < 1 || batch < 1 || classes < 1) {
    throw InputError(
        fmt::format("synthetic data: {} samples in batches of {} over {} classes: each must be "
                    "at least 1",
                    count, batch, classes));
  }
}

uint64_t SyntheticBatchSource::key(int64_t b) const {
  return splitmix64(splitmix64(seed_ + static_cast<uint64_t>(epoch_)) + static_cast<uint64_t>(b));
}

void SyntheticBatchSource::fill(int64_t b, const Box4& tensor, const Slice& slice, float* input,
                                std::span<int32_t> labels, std::span<float> weights) const {
  const uint64_t k = key(b);
  fill_seeded(slice, tensor, k, TensorStream::input, input);
  for (size_t n = 0; n < labels.size(); ++n) {
    labels[n] = static_cast<int32_t>(splitmix64(k + n) % static_cast<uint64_t>(classes_));
    weights[n] = b * batch_ + static_cast<int64_t>(n) < count_ ? 1.0f : 0.0f;
  }
}

}  // namespace convgrid
