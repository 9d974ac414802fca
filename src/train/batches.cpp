// Batches of a data set for one rank (see batches.hpp).
#include "train/batches.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "convgrid/error.hpp"
#include "io/idx.hpp"
#include "io/seeded_tensor.hpp"

namespace convgrid {
std::vector<int64_t> epoch_order(int64_t count, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(count);
  for (int64_t i = 0; i < count; ++i) order[i] = i;
  uint64_t state = seed * 0xD1B54A32D192ED03ull + static_cast<uint64_t>(epoch);
  for (int64_t i = count - 1; i > 0; --i) {
    const int64_t j = static_cast<int64_t>(splitmix64(state) % static_cast<uint64_t>(i + 1));
    state += kSplitmixGamma;
    std::swap(order[i], order[j]);
  }
  return order;
}

IdxBatchSource::IdxBatchSource(std::string images, std::string labels, int64_t count, int64_t batch,
                         uint64_t seed, bool shuffle, AugmentOptions augment)
    : images_path_(std::move(images)), count_(count), batch_(batch), seed_(seed), shuffle_(shuffle),
      augment_(augment) {
  validate(augment_);
  const int64_t in_file = idx_count(images_path_);
  if (idx_count(labels) != in_file) {
    throw InputError(fmt::format("{} holds {} images but {} holds {} labels", images_path_, in_file,
                                 labels, idx_count(labels)));
  }
  if (count_ < 1 || count_ > in_file) {
    throw InputError(fmt::format("{} samples asked of {}, which holds {}", count_, images_path_, in_file));
  }
  const IdxHeader h = read_idx_header(images_path_);
  if (h.dims.size() != 3) {
    throw InputError(fmt::format("{}: {} dimensions, images have 3", images_path_, h.dims.size()));
  }
  rows_ = h.dims[1];
  cols_ = h.dims[2];
  pixels_ = rows_ * cols_;
  normalise_images(ImageSet{1, 1, 1, {0}}, kFashionMnistMean, kFashionMnistStd, &pad_);
  all_labels_ = read_idx_labels(labels, Range{0, count_});
  slot_.assign(count_, -1);
}

void IdxBatchSource::start_epoch(int64_t epoch, Range samples) {
  epoch_ = epoch;
  if (!shuffle_ && loaded_ && *loaded_ == samples) return;  // the same samples in the same order
  loaded_ = samples;
  if (shuffle_) {
    order_ = epoch_order(count_, seed_, epoch);
  } else if (order_.empty()) {
    order_.resize(count_);
    for (int64_t i = 0; i < count_; ++i) order_[i] = i;
  }
  std::vector<int64_t> wanted;
  for (int64_t b = 0; b < batches(); ++b) {
    for (int64_t n = samples.begin; n < samples.end; ++n) {
      const int64_t pos = b * batch_ + n;
      if (pos < count_) wanted.push_back(order_[pos]);
    }
  }
  std::sort(wanted.begin(), wanted.end());
  std::fill(slot_.begin(), slot_.end(), -1);
  if (wanted.empty()) {
    images_.clear();
    return;
  }
  const ImageSet set = read_idx_images_at(images_path_, wanted);
  images_.resize(set.pixels.size());
  normalise_images(set, kFashionMnistMean, kFashionMnistStd, images_.data());
  for (size_t i = 0; i < wanted.size(); ++i) slot_[wanted[i]] = static_cast<int64_t>(i);
}

std::vector<AugmentDraw> IdxBatchSource::draws(int64_t b, Range samples) const {
  std::vector<AugmentDraw> out;
  if (!augment_.enabled()) return out;
  for (int64_t n = samples.begin; n < samples.end; ++n) {
    const int64_t pos = b * batch_ + n;
    out.push_back(pos < count_ ? augment_draw(augment_, seed_, epoch_, order_[pos])
                               : AugmentDraw{});
  }
  return out;
}

void IdxBatchSource::fill(int64_t b, const Box4& tensor, const Slice& slice, float* input,
                       std::span<int32_t> labels, std::span<float> weights) const {
  const int64_t H = tensor.extent(2), W = tensor.extent(3);
  if (tensor.extent(1) * H * W != pixels_) {
    throw InputError(fmt::format("the network's input has {} values per sample, the images {}",
                                 tensor.extent(1) * H * W, pixels_));
  }
  for (int64_t n = 0; n < batch_; ++n) {
    const int64_t pos = b * batch_ + n;
    labels[n] = pos < count_ ? all_labels_[order_[pos]] : 0;
    weights[n] = pos < count_ ? 1.0f : 0.0f;
  }
  const std::vector<AugmentDraw> drawn = draws(b, slice.box.r[0]);
  for_each_run(slice, [&](int64_t n, int64_t c, int64_t y, int64_t x0, int64_t x1, int64_t off) {
    const int64_t pos = b * batch_ + n;
    float* dst = input + off;
    if (pos >= count_) {
      std::fill(dst, dst + (x1 - x0), 0.0f);
      return;
    }
    const int64_t s = slot_[order_[pos]];
    if (s < 0) throw Error(fmt::format("sample {} of batch {} was not read on this rank", n, b));
    const float* image = images_.data() + s * pixels_;
    const int64_t first = (c * H + y) * W + x0;
    if (drawn.empty()) {
      std::memcpy(dst, image + first, (x1 - x0) * sizeof(float));
    } else {
      const AugmentDraw& d = drawn[n - slice.box.r[0].begin];
      augment_pixels(image, rows_, cols_, d, pad_, first, x1 - x0, dst);
    }
  });
}

}  // namespace convgrid
