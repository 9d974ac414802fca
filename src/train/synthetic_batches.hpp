// Synthetic training data (`convgrid train --data synthetic`): inputs and labels drawn from the
// seed, the epoch and the batch's index, for any network input (ResNet-50's 3x224x224 where no
// data set is at hand). Every element depends on its place in the batch tensor only
// (io/seeded_tensor.hpp), so each rank fills its slice alone and the batch is the same on any
// number of ranks. Labels: splitmix64(key + n) mod classes, with key = splitmix64(splitmix64(seed
// + epoch) + batch); every sample is real except the last batch's padding past `count`.
#pragma once

#include <cstdint>

#include "train/batches.hpp"

namespace convgrid {

class SyntheticBatchSource final : public BatchSource {
 public:
  // InputError unless count, batch and classes are at least 1.
  SyntheticBatchSource(int64_t count, int64_t batch, uint64_t seed, int64_t classes);

  int64_t count() const override { return count_; }
  int64_t batches() const override { return (count_ + batch_ - 1) / batch_; }
  void start_epoch(int64_t epoch, Range) override { epoch_ = epoch; }
  void fill(int64_t b, const Box4& tensor, const Slice& slice, float* input,
            std::span<int32_t> labels, std::span<float> weights) const override;
  int64_t image_bytes() const override { return 0; }

 private:
  uint64_t key(int64_t b) const;

  int64_t count_, batch_;
  uint64_t seed_;
  int64_t classes_;
  int64_t epoch_ = 0;
};

}  // namespace convgrid
