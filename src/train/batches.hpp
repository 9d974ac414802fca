// The samples of each training step, and this rank's part of them (issue: each rank reads only
// its samples). An epoch visits the data set in an order drawn from the seed and the epoch number
// (the same on every rank, for any grid); batch b holds positions [b*N, b*N + N) of that order,
// the last batch padded with weight-0 samples (all-zero images) so that every step has N.
// A rank needs the samples of its part of the first layer's input (the slice's sample range) in
// every batch of the epoch: they are read in one pass over the image file at the start of the
// epoch, normalised, and copied into the input slice (only its rows, columns and channels) per step.
// Labels are small (one byte per sample): every rank reads all of them once.
// With augmentation (train/augment.hpp; the training set only) `fill` writes, for exactly the
// elements of the slice, the cropped and flipped pixels of each sample's draw for the epoch:
// element (n, c, y, x) of the C x H x W input (C*H*W = rows*cols, as 1 x rows x cols or flattened
// to rows*cols x 1 x 1) is pixel q = (c*H + y)*W + x of the augmented rows x cols image.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "layout/box.hpp"
#include "train/augment.hpp"

namespace convgrid {

// A permutation of [0, count) from the seed and the epoch (Fisher-Yates with splitmix64).
std::vector<int64_t> epoch_order(int64_t count, uint64_t seed, int64_t epoch);

// Where the trainer's batches come from: the samples of an epoch in batches of a fixed size, each
// rank filling only its slice of the first layer's input.
class BatchSource {
 public:
  virtual ~BatchSource() = default;
  virtual int64_t count() const = 0;
  virtual int64_t batches() const = 0;
  // Prepares this rank's part of the epoch: the samples at positions within `samples` of each batch.
  virtual void start_epoch(int64_t epoch, Range samples) = 0;
  // Fills the input slice (of tensor `tensor`, the first layer's view of the batch) with batch b,
  // and every entry of labels and weights (batch entries each; weight 0: a padding sample).
  virtual void fill(int64_t b, const Box4& tensor, const Slice& slice, float* input,
                    std::span<int32_t> labels, std::span<float> weights) const = 0;
  // Bytes of the samples this rank holds for the current epoch (not MemoryTracker's).
  virtual int64_t image_bytes() const = 0;
};

// Images and labels from IDX files (Fashion-MNIST).
class IdxBatchSource final : public BatchSource {
 public:
  // `count` samples (the first ones of the files); `shuffle` false keeps the file order (test).
  // Throws InputError for files that are not what they claim and for a negative crop padding.
  IdxBatchSource(std::string images, std::string labels, int64_t count, int64_t batch, uint64_t seed,
                 bool shuffle, AugmentOptions augment = {});

  int64_t count() const override { return count_; }
  int64_t batches() const override { return (count_ + batch_ - 1) / batch_; }
  // Reads this rank's images for the epoch: those at positions within `samples` of each batch.
  void start_epoch(int64_t epoch, Range samples) override;
  // Augmented when asked.
  void fill(int64_t b, const Box4& tensor, const Slice& slice, float* input,
            std::span<int32_t> labels, std::span<float> weights) const override;
  int64_t image_bytes() const override { return static_cast<int64_t>(images_.capacity() * sizeof(float)); }

 private:
  // The draw of each sample n of `samples` in batch b (empty without augmentation).
  std::vector<AugmentDraw> draws(int64_t b, Range samples) const;

  std::string images_path_;
  std::vector<uint8_t> all_labels_;
  int64_t count_, batch_;
  uint64_t seed_;
  bool shuffle_;
  AugmentOptions augment_;
  int64_t epoch_ = 0;           // of the last start_epoch
  std::vector<int64_t> order_;
  std::optional<Range> loaded_;  // the sample range of the last start_epoch
  int64_t rows_ = 0, cols_ = 0, pixels_ = 0;  // per image
  float pad_ = 0;               // the normalised value of raw 0 (a padded pixel)
  std::vector<int64_t> slot_;   // sample -> index in images_, or -1
  std::vector<float> images_;   // normalised images this rank read
};

}  // namespace convgrid
