// Random crop and flip of training images, drawn per sample (see augment.hpp).
#include "train/augment.hpp"

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "io/seeded_tensor.hpp"

namespace convgrid {
namespace {

// "AUGMENT1": keeps the augmentation's numbers apart from the other uses of the seed.
constexpr uint64_t kAugmentSalt = 0x4155474d454e5431ULL;

}  // namespace

void validate(const AugmentOptions& options) {
  if (options.crop_padding < 0) {
    throw InputError(fmt::format("crop padding {}: must be 0 or more", options.crop_padding));
  }
}

AugmentDraw augment_draw(const AugmentOptions& options, uint64_t seed, int64_t epoch,
                         int64_t sample) {
  const uint64_t key =
      splitmix64(splitmix64(splitmix64(seed ^ kAugmentSalt) + static_cast<uint64_t>(epoch)) +
                 static_cast<uint64_t>(sample));
  const auto u = [&](uint64_t i) { return splitmix64(key + i * kSplitmixGamma); };
  const auto offsets = static_cast<uint64_t>(2 * options.crop_padding + 1);
  AugmentDraw d;
  d.padding = options.crop_padding;
  d.oy = static_cast<int64_t>(u(0) % offsets);
  d.ox = static_cast<int64_t>(u(1) % offsets);
  d.flip = options.flip && (u(2) >> 63) == 1;
  return d;
}

int64_t augment_source(const AugmentDraw& draw, int64_t rows, int64_t cols, int64_t y, int64_t x) {
  const int64_t sy = y + draw.oy - draw.padding;
  const int64_t sx = (draw.flip ? cols - 1 - x : x) + draw.ox - draw.padding;
  if (sy < 0 || sy >= rows || sx < 0 || sx >= cols) return -1;
  return sy * cols + sx;
}

void augment_pixels(const float* image, int64_t rows, int64_t cols, const AugmentDraw& draw,
                    float pad, int64_t first, int64_t count, float* out) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t q = first + i;
    const int64_t src = augment_source(draw, rows, cols, q / cols, q % cols);
    out[i] = src < 0 ? pad : image[src];
  }
}

}  // namespace convgrid
