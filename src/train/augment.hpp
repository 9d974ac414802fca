// Data augmentation of training images: what torchvision's
//   Compose([RandomCrop((rows, cols), padding=p), RandomHorizontalFlip(), ToTensor(),
//            Normalize(mean, std)])
// does to a rows x cols uint8 image R, with the random draws taken from a hash (below) instead of
// torch's generator, so that they depend on the run's seed, the epoch and the sample's index in
// the data set only: the same on any number of ranks, any grid, and in a resumed run.
//
// Pixels (y in [0, rows), x in [0, cols)):
//   padded     P[y'][x'] = R[y' - p][x' - p] when 0 <= y' - p < rows and 0 <= x' - p < cols, else 0
//   crop       C[y][x]   = P[y + oy][x + ox]                  oy, ox in [0, 2p]
//   flip       F[y][x]   = C[y][cols - 1 - x] if flip, else C[y][x]
//   normalise  out[y][x] = (F[y][x] / 255 - mean) / std       (io/idx.hpp's normalise_images)
// so out[y][x] is the normalised raw pixel (y + oy - p, x' + ox - p), x' = flip ? cols - 1 - x : x,
// or the normalised value of raw 0 where that lies outside the image. Normalising is per pixel, so
// it is done first (on the whole image) and the crop and flip move normalised values.
//
// Draws, with splitmix64 of io/seeded_tensor.hpp (it adds kSplitmixGamma, then mixes), all
// arithmetic modulo 2^64, epoch 0-based, sample = index in the data set (not in the epoch's order):
//   key  = splitmix64(splitmix64(splitmix64(seed ^ 0x4155474d454e5431) + epoch) + sample)
//   u_i  = splitmix64(key + i * kSplitmixGamma),  i = 0, 1, 2
//   oy   = u_0 mod (2p + 1),   ox = u_1 mod (2p + 1),   flip = options.flip and (u_2 >> 63) == 1
// The three numbers are drawn whatever the options, so turning the flip on leaves the crops as
// they were. (The modulo's bias, at most (2p + 1) / 2^64 per value, is negligible.)
#pragma once

#include <cstdint>

namespace convgrid {

struct AugmentOptions {
  int64_t crop_padding = 0;  // p: zero padding on every side before the random crop; 0 = no crop
  bool flip = false;         // left-right flip with probability 1/2

  bool enabled() const { return crop_padding > 0 || flip; }
};

// InputError naming the value when the padding is negative.
void validate(const AugmentOptions& options);

// One sample's draw in one epoch.
struct AugmentDraw {
  int64_t padding = 0;     // p of the options
  int64_t oy = 0, ox = 0;  // the crop's corner in the padded image, each in [0, 2p]
  bool flip = false;
};

AugmentDraw augment_draw(const AugmentOptions& options, uint64_t seed, int64_t epoch,
                         int64_t sample);

// The row-major index (row * cols + col) of the raw pixel that output pixel (y, x) of a rows x cols
// image comes from, or -1 when it is padding.
int64_t augment_source(const AugmentDraw& draw, int64_t rows, int64_t cols, int64_t y, int64_t x);

// out[i] = the augmented pixel of row-major index first + i, for i in [0, count), of a normalised
// rows x cols image; `pad` is the normalised value of raw 0.
void augment_pixels(const float* image, int64_t rows, int64_t cols, const AugmentDraw& draw,
                    float pad, int64_t first, int64_t count, float* out);

}  // namespace convgrid
