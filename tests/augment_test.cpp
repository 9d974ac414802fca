// Tests of training-data augmentation (train/augment.hpp) through IdxBatchSource::fill
// (train/batches.hpp): the per-sample draws (the documented derivation, in range, roughly uniform,
// the crops unchanged by the flip option), fill against a direct pad/crop/flip of the raw images,
// fill in pieces (over samples, rows, columns, flat ranges, the flattened view; each piece read as
// a rank would) against fill whole, and augmentation off against the plain normalised images.
// The images are small and not square (5 x 6) so that a swapped row and column shows.
#include "train/augment.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "io/idx.hpp"
#include "io/seeded_tensor.hpp"
#include "temp_dir_test_base.hpp"
#include "throws_input_error.hpp"
#include "train/batches.hpp"

namespace convgrid {
namespace {

constexpr int64_t kCount = 7, kRows = 5, kCols = 6, kBatch = 3;  // the last batch has 1 real sample
constexpr uint64_t kSeed = 42;

// Raw pixel (r, c) of sample i: never 0, so padding shows.
uint8_t raw_pixel(int64_t i, int64_t r, int64_t c) {
  return static_cast<uint8_t>(1 + i * 29 + r * 7 + c * 2);
}

// An uncompressed IDX file of unsigned bytes: 00 00 08 ndims, big-endian uint32 sizes, the data.
void write_idx(const std::string& path, const std::vector<uint32_t>& dims,
               const std::vector<uint8_t>& data) {
  std::vector<uint8_t> bytes = {0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(d >> shift));
  }
  bytes.insert(bytes.end(), data.begin(), data.end());
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::ssize(bytes));
}

const Box4 kImageView{{Range{0, kBatch}, Range{0, 1}, Range{0, kRows}, Range{0, kCols}}};
const Box4 kFlatView{{Range{0, kBatch}, Range{0, kRows* kCols}, Range{0, 1}, Range{0, 1}}};

Box4 with(Box4 b, int d, Range r) {
  b.r[d] = r;
  return b;
}

class AugmentTest : public test_data::TempDirTest {
 protected:
  AugmentTest() : TempDirTest("convgrid_augment_") {}

  void SetUp() override {
    TempDirTest::SetUp();
    std::vector<uint8_t> pixels, labels;
    for (int64_t i = 0; i < kCount; ++i) {
      labels.push_back(static_cast<uint8_t>(i % 10));
      for (int64_t r = 0; r < kRows; ++r) {
        for (int64_t c = 0; c < kCols; ++c) pixels.push_back(raw_pixel(i, r, c));
      }
    }
    write_idx(path("images"), {kCount, kRows, kCols}, pixels);
    write_idx(path("labels"), {kCount}, labels);
  }

  IdxBatchSource source(AugmentOptions o, bool shuffle = true) const {
    return IdxBatchSource(path("images"), path("labels"), kCount, kBatch, kSeed, shuffle, o);
  }

  // Batch b of an epoch filled whole (the source has read every sample of the batch).
  static std::vector<float> fill_whole(const IdxBatchSource& src, const Box4& tensor, int64_t b) {
    std::vector<float> out(tensor.volume());
    std::vector<int32_t> labels(kBatch);
    std::vector<float> weights(kBatch);
    src.fill(b, tensor, Slice::whole(tensor), out.data(), labels, weights);
    return out;
  }

  // Batch b of an epoch filled piece by piece, each piece by its own source that read only the
  // piece's samples (as the rank holding it would), gathered into the whole tensor.
  std::vector<float> fill_pieces(AugmentOptions o, int64_t epoch, const Box4& tensor, int64_t b,
                                 const std::vector<Slice>& pieces) const {
    std::vector<float> out(tensor.volume(), std::nanf(""));
    for (const Slice& piece : pieces) {
      IdxBatchSource src = source(o);
      src.start_epoch(epoch, piece.box.r[0]);
      std::vector<float> part(piece.size());
      std::vector<int32_t> labels(kBatch);
      std::vector<float> weights(kBatch);
      src.fill(b, tensor, piece, part.data(), labels, weights);
      for_each_run(piece,
                   [&](int64_t n, int64_t c, int64_t y, int64_t x0, int64_t x1, int64_t off) {
                     std::copy(part.begin() + off, part.begin() + off + (x1 - x0),
                               out.begin() + tensor.offset(n, c, y, x0));
                   });
    }
    return out;
  }
};

// Batch b of an epoch by the definition: pad each raw image with zeros, crop at the draw's corner,
// flip, then normalise; samples past the end of the data set are all-zero floats.
std::vector<float> reference_batch(const AugmentOptions& o, int64_t epoch, int64_t b) {
  const std::vector<int64_t> order = epoch_order(kCount, kSeed, epoch);
  const int64_t p = o.crop_padding, pw = kCols + 2 * p;
  ImageSet set{kBatch, kRows, kCols, {}};
  for (int64_t n = 0; n < kBatch; ++n) {
    const int64_t pos = b * kBatch + n;
    const int64_t i = pos < kCount ? order[pos] : 0;
    const AugmentDraw d = augment_draw(o, kSeed, epoch, i);
    std::vector<uint8_t> padded((kRows + 2 * p) * pw, 0);
    for (int64_t r = 0; r < kRows; ++r) {
      for (int64_t c = 0; c < kCols; ++c) padded[(r + p) * pw + c + p] = raw_pixel(i, r, c);
    }
    for (int64_t y = 0; y < kRows; ++y) {
      std::vector<uint8_t> row;
      for (int64_t x = 0; x < kCols; ++x) row.push_back(padded[(y + d.oy) * pw + x + d.ox]);
      if (d.flip) std::reverse(row.begin(), row.end());
      set.pixels.insert(set.pixels.end(), row.begin(), row.end());
    }
  }
  std::vector<float> out(set.pixels.size());
  normalise_images(set, kFashionMnistMean, kFashionMnistStd, out.data());
  for (int64_t pos = std::max(b * kBatch, kCount); pos < (b + 1) * kBatch; ++pos) {
    std::fill_n(out.begin() + (pos - b * kBatch) * kRows * kCols, kRows * kCols, 0.0f);
  }
  return out;
}

const std::array<AugmentOptions, 5> kAugmented = {
    AugmentOptions{2, true}, AugmentOptions{1, false}, AugmentOptions{0, true},
    AugmentOptions{3, true},
    AugmentOptions{7, true}};  // 7: more than the image, some crops all padding

TEST(AugmentDraw, FollowsTheDocumentedDerivation) {
  for (uint64_t seed : {0ull, 1ull, 42ull, ~0ull}) {
    for (int64_t epoch : {0, 1, 9}) {
      for (int64_t sample : {0, 1, 59999}) {
        const uint64_t key = splitmix64(
            splitmix64(splitmix64(seed ^ 0x4155474d454e5431ull) + static_cast<uint64_t>(epoch)) +
            static_cast<uint64_t>(sample));
        const AugmentDraw d = augment_draw({4, true}, seed, epoch, sample);
        EXPECT_EQ(d.padding, 4);
        EXPECT_EQ(d.oy, static_cast<int64_t>(splitmix64(key) % 9));
        EXPECT_EQ(d.ox, static_cast<int64_t>(splitmix64(key + kSplitmixGamma) % 9));
        EXPECT_EQ(d.flip, splitmix64(key + 2 * kSplitmixGamma) >> 63 == 1);
      }
    }
  }
}

TEST(AugmentDraw, DeterministicAndInRange) {
  for (int64_t p : {0, 1, 2, 3, 14}) {
    for (int64_t sample = 0; sample < 1000; ++sample) {
      const AugmentDraw d = augment_draw({p, true}, kSeed, 3, sample);
      const AugmentDraw again = augment_draw({p, true}, kSeed, 3, sample);
      EXPECT_EQ(d.oy, again.oy);
      EXPECT_EQ(d.ox, again.ox);
      EXPECT_EQ(d.flip, again.flip);
      EXPECT_TRUE(0 <= d.oy && d.oy <= 2 * p && 0 <= d.ox && d.ox <= 2 * p) << p << " " << sample;
      // The flip option leaves the crop as it was, and off never flips.
      const AugmentDraw unflipped = augment_draw({p, false}, kSeed, 3, sample);
      EXPECT_EQ(unflipped.oy, d.oy);
      EXPECT_EQ(unflipped.ox, d.ox);
      EXPECT_FALSE(unflipped.flip);
    }
  }
}

TEST(AugmentDraw, RoughlyUniformAndIndependent) {
  constexpr int64_t kDraws = 25000;  // 5 offsets: 5000 each, standard deviation 63
  std::array<int64_t, 5> oy{}, ox{};
  std::array<int64_t, 25> joint{};
  int64_t flips = 0, same_next_epoch = 0, same_next_seed = 0;
  for (int64_t s = 0; s < kDraws; ++s) {
    const AugmentDraw d = augment_draw({2, true}, 7, 3, s);
    ++oy[d.oy];
    ++ox[d.ox];
    ++joint[d.oy * 5 + d.ox];
    flips += d.flip;
    const auto same = [&](const AugmentDraw& e) {
      return e.oy == d.oy && e.ox == d.ox && e.flip == d.flip;
    };
    same_next_epoch += same(augment_draw({2, true}, 7, 4, s));
    same_next_seed += same(augment_draw({2, true}, 8, 3, s));
  }
  for (int64_t k = 0; k < 5; ++k) {
    EXPECT_NEAR(oy[k], 5000, 350) << k;
    EXPECT_NEAR(ox[k], 5000, 350) << k;
  }
  for (int64_t k = 0; k < 25; ++k) EXPECT_NEAR(joint[k], 1000, 180) << k;  // deviation 31
  EXPECT_NEAR(flips, 12500, 450);                                          // deviation 79
  // Another epoch or seed draws anew: equal by chance 1 time in 50 (deviation 22).
  EXPECT_NEAR(same_next_epoch, 500, 150);
  EXPECT_NEAR(same_next_seed, 500, 150);
}

TEST(AugmentDraw, SourcePixels) {
  const AugmentDraw d{1, 0, 2, false};  // rows 3, cols 4: out (y, x) = raw (y - 1, x + 1)
  EXPECT_EQ(augment_source(d, 3, 4, 0, 0), -1);
  EXPECT_EQ(augment_source(d, 3, 4, 1, 0), 1);
  EXPECT_EQ(augment_source(d, 3, 4, 2, 2), 7);
  EXPECT_EQ(augment_source(d, 3, 4, 2, 3), -1);
  const AugmentDraw f{1, 1, 1, true};  // out (y, x) = raw (y, 3 - x)
  EXPECT_EQ(augment_source(f, 3, 4, 0, 0), 3);
  EXPECT_EQ(augment_source(f, 3, 4, 2, 3), 8);
}

TEST(AugmentOptions, NegativePaddingIsAnInputError) {
  EXPECT_TRUE(throws_input_error([] { validate(AugmentOptions{-1, false}); }, {"crop padding -1"}));
  EXPECT_NO_THROW(validate(AugmentOptions{}));
  EXPECT_FALSE(AugmentOptions{}.enabled());
}

TEST_F(AugmentTest, NegativePaddingRefusedBySource) {
  EXPECT_TRUE(throws_input_error([&] { source({-2, true}); }, {"crop padding -2"}));
}

TEST_F(AugmentTest, FillMatchesTheDefinition) {
  int64_t flipped = 0, shifted = 0;
  for (const AugmentOptions& o : kAugmented) {
    IdxBatchSource src = source(o);
    for (int64_t epoch = 0; epoch < 3; ++epoch) {
      src.start_epoch(epoch, Range{0, kBatch});
      for (int64_t b = 0; b < src.batches(); ++b) {
        const std::vector<float> expected = reference_batch(o, epoch, b);
        EXPECT_EQ(fill_whole(src, kImageView, b), expected)
            << o.crop_padding << " " << epoch << " " << b;
        EXPECT_EQ(fill_whole(src, kFlatView, b), expected)
            << o.crop_padding << " " << epoch << " " << b;
      }
      for (int64_t i = 0; i < kCount; ++i) {
        const AugmentDraw d = augment_draw(o, kSeed, epoch, i);
        flipped += d.flip;
        shifted += d.oy != d.padding || d.ox != d.padding;
      }
    }
  }
  EXPECT_GT(flipped, 10);  // the cases above do flip and shift
  EXPECT_GT(shifted, 10);
}

TEST_F(AugmentTest, PiecesEqualWhole) {
  const Box4& t = kImageView;
  const std::vector<std::vector<Slice>> image_partitions = {
      {Slice::whole(with(t, 0, {0, 1})), Slice::whole(with(t, 0, {1, 3}))},
      {Slice::whole(with(t, 2, {0, 2})), Slice::whole(with(t, 2, {2, 5}))},
      {Slice::whole(with(t, 3, {0, 1})), Slice::whole(with(t, 3, {1, 4})),
       Slice::whole(with(t, 3, {4, 6}))},
      {Slice{t, {0, 17}}, Slice{t, {17, 44}}, Slice{t, {44, t.volume()}}},
      {Slice::whole(with(t, 0, {0, 1})), Slice{with(t, 0, {1, 3}), {0, 13}},
       Slice{with(t, 0, {1, 3}), {13, 60}}},
  };
  std::vector<std::vector<Slice>> partitions = image_partitions;
  // Samples x rows x columns, 2 x 2 x 2 blocks, as a grid would split them.
  partitions.emplace_back();
  for (Range n : {Range{0, 2}, Range{2, 3}}) {
    for (Range y : {Range{0, 3}, Range{3, 5}}) {
      for (Range x : {Range{0, 2}, Range{2, 6}}) {
        partitions.back().push_back(Slice::whole(with(with(with(t, 0, n), 2, y), 3, x)));
      }
    }
  }
  const Box4& f = kFlatView;
  const std::vector<std::vector<Slice>> flat_partitions = {
      {Slice::whole(with(f, 1, {0, 11})), Slice::whole(with(f, 1, {11, 30}))},
      {Slice{f, {0, 40}}, Slice{f, {40, f.volume()}}},
      {Slice::whole(with(f, 0, {0, 2})), Slice::whole(with(f, 0, {2, 3}))},
  };
  for (const AugmentOptions& o : {kAugmented[0], kAugmented[3], AugmentOptions{}}) {
    IdxBatchSource whole = source(o);
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      whole.start_epoch(epoch, Range{0, kBatch});
      for (int64_t b = 0; b < whole.batches(); ++b) {
        const std::vector<float> expected = fill_whole(whole, t, b);
        for (const std::vector<Slice>& pieces : partitions) {
          EXPECT_EQ(fill_pieces(o, epoch, t, b, pieces), expected)
              << pieces.size() << " pieces, batch " << b;
        }
        for (const std::vector<Slice>& pieces : flat_partitions) {
          EXPECT_EQ(fill_pieces(o, epoch, f, b, pieces), expected)
              << pieces.size() << " flat pieces, batch " << b;
        }
      }
    }
  }
}

// Without augmentation fill copies the normalised images in the epoch's order, as before.
TEST_F(AugmentTest, OffIsThePlainImages) {
  const ImageSet raw = read_idx_images(path("images"), Range{0, kCount});
  std::vector<float> normalised(raw.pixels.size());
  normalise_images(raw, kFashionMnistMean, kFashionMnistStd, normalised.data());
  for (bool shuffle : {true, false}) {
    IdxBatchSource src = source(AugmentOptions{}, shuffle);
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      src.start_epoch(epoch, Range{0, kBatch});
      std::vector<int64_t> order = epoch_order(kCount, kSeed, epoch);
      if (!shuffle) std::iota(order.begin(), order.end(), 0);
      for (int64_t b = 0; b < src.batches(); ++b) {
        std::vector<float> expected(kImageView.volume(), 0.0f);
        for (int64_t n = 0; n < kBatch && b * kBatch + n < kCount; ++n) {
          const auto image = normalised.begin() + order[b * kBatch + n] * kRows * kCols;
          std::copy(image, image + kRows * kCols, expected.begin() + n * kRows * kCols);
        }
        EXPECT_EQ(fill_whole(src, kImageView, b), expected) << shuffle << " " << epoch << " " << b;
      }
    }
  }
}

// Augmentation changes the images, and differently in each epoch (in the file's order, which the
// epochs share).
TEST_F(AugmentTest, AugmentedDiffersFromPlainAndByEpoch) {
  IdxBatchSource plain = source(AugmentOptions{}, false), augmented = source(kAugmented[0], false);
  plain.start_epoch(0, Range{0, kBatch});
  augmented.start_epoch(0, Range{0, kBatch});
  const std::vector<float> first = fill_whole(augmented, kImageView, 0);
  EXPECT_NE(first, fill_whole(plain, kImageView, 0));
  augmented.start_epoch(1, Range{0, kBatch});
  EXPECT_NE(first, fill_whole(augmented, kImageView, 0));
}

}  // namespace
}  // namespace convgrid
