// Tests of IDX reading: round trips of small synthetic files, gzip-compressed and plain, reads of
// sub-ranges, one test per kind of malformed file, normalisation, and the real Fashion-MNIST
// test set when Debian's dataset-fashion-mnist is installed.
#include "io/idx.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "throws_input_error.hpp"
#include "temp_dir_test_base.hpp"

namespace convgrid {
namespace {

namespace fs = std::filesystem;

// The bytes of an IDX file: 00 00 type ndims, the sizes big-endian, then data.
std::string idx_file(const std::vector<uint32_t>& dims, std::string_view data, char type = 0x08) {
  std::string s{'\0', '\0', type, static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) s += static_cast<char>(d >> shift & 0xff);
  }
  s += data;
  return s;
}

// Pixel (row r, col c) of sample i in the synthetic image files.
uint8_t pixel(int64_t i, int64_t r, int64_t c) { return static_cast<uint8_t>(i * 37 + r * 3 + c); }

std::string image_data(int64_t count, int64_t rows, int64_t cols) {
  std::string s;
  for (int64_t i = 0; i < count; ++i) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) s += static_cast<char>(pixel(i, r, c));
    }
  }
  return s;
}

constexpr std::array<uint8_t, 5> kLabels = {9, 0, 3, 7, 1};

std::string label_data() { return {kLabels.begin(), kLabels.end()}; }

// Each test gets its own empty directory.
class IdxTest : public test_data::TempDirTest {
 protected:
  IdxTest() : TempDirTest("convgrid_idx_") {}

  std::string write_plain(std::string_view name, std::string_view bytes) const {
    std::ofstream(path(name), std::ios::binary).write(bytes.data(), std::ssize(bytes));
    return path(name);
  }

  std::string write_gz(std::string_view name, std::string_view bytes) const {
    gzFile f = gzopen(path(name).c_str(), "wb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())),
              static_cast<int>(bytes.size()));
    EXPECT_EQ(gzclose(f), Z_OK);
    return path(name);
  }

  // Both forms of a file: gzip-compressed and plain.
  std::array<std::string, 2> write_both(std::string_view stem, std::string_view bytes) const {
    return {write_gz(std::string(stem) + ".gz", bytes), write_plain(stem, bytes)};
  }

  // Checks that f throws an InputError whose message starts with "<p>: " and has every part.
  template <class F>
  static ::testing::AssertionResult rejected(const std::string& p, F&& f,
                                             std::initializer_list<std::string_view> parts) {
    auto result = throws_input_error(f, parts);
    if (!result) return result;
    try {
      f();
    } catch (const InputError& e) {
      if (!std::string_view(e.what()).starts_with(p + ": ")) {
        return ::testing::AssertionFailure()
               << "message does not start with the path: " << e.what();
      }
    }
    return result;
  }
};

void expect_images(const ImageSet& set, Range samples) {
  ASSERT_EQ(set.count, samples.size());
  ASSERT_EQ(set.rows, 28);
  ASSERT_EQ(set.cols, 28);
  ASSERT_EQ(std::ssize(set.pixels), samples.size() * 28 * 28);
  for (int64_t i = 0; i < set.count; ++i) {
    for (int64_t r = 0; r < 28; ++r) {
      for (int64_t c = 0; c < 28; ++c) {
        ASSERT_EQ(set.pixels[(i * 28 + r) * 28 + c], pixel(samples.begin + i, r, c))
            << "sample " << samples.begin + i << " row " << r << " col " << c;
      }
    }
  }
}

// ---- Round trips -----------------------------------------------------------------------------

TEST_F(IdxTest, RoundTripsFiveImagesAndLabels) {
  for (const std::string& images :
       write_both("images", idx_file({5, 28, 28}, image_data(5, 28, 28)))) {
    SCOPED_TRACE(images);
    EXPECT_EQ(idx_count(images), 5);
    EXPECT_EQ(read_idx_header(images).dims, (std::vector<int64_t>{5, 28, 28}));
    expect_images(read_idx_images(images, {0, 5}), {0, 5});
  }
  for (const std::string& labels : write_both("labels", idx_file({5}, label_data()))) {
    SCOPED_TRACE(labels);
    EXPECT_EQ(idx_count(labels), 5);
    EXPECT_EQ(read_idx_labels(labels, {0, 5}),
              std::vector<uint8_t>(kLabels.begin(), kLabels.end()));
  }
}

TEST_F(IdxTest, ReadsOnlyTheRequestedSamples) {
  for (const std::string& images :
       write_both("images", idx_file({5, 28, 28}, image_data(5, 28, 28)))) {
    SCOPED_TRACE(images);
    for (Range r : {Range{1, 4}, Range{4, 5}, Range{0, 1}, Range{2, 2}, Range{5, 5}}) {
      expect_images(read_idx_images(images, r), r);
    }
  }
  for (const std::string& labels : write_both("labels", idx_file({5}, label_data()))) {
    EXPECT_EQ(read_idx_labels(labels, {1, 4}), (std::vector<uint8_t>{0, 3, 7}));
    EXPECT_EQ(read_idx_labels(labels, {4, 5}), (std::vector<uint8_t>{1}));
    EXPECT_TRUE(read_idx_labels(labels, {3, 3}).empty());
  }
}

TEST_F(IdxTest, DataAfterTheRangeIsNotRead) {
  // The file holds only samples 0 and 1 of the 5 its header promises.
  const std::string p = write_gz("short.gz", idx_file({5, 28, 28}, image_data(2, 28, 28)));
  expect_images(read_idx_images(p, {0, 2}), {0, 2});
  EXPECT_TRUE(rejected(p,
                       [&] {
                         read_idx_images(p, {1, 3});
                       },
                       {"data truncated", "(5, 28, 28)", "need 3920 bytes", "holds only 1568"}));
}

// ---- Malformed files -------------------------------------------------------------------------

TEST_F(IdxTest, RejectsAMissingFile) {
  const std::string p = path("absent.gz");
  EXPECT_TRUE(rejected(p, [&] { idx_count(p); }, {"cannot open", "No such file"}));
}

TEST_F(IdxTest, RejectsADirectory) {
  const std::string p = path("");
  EXPECT_TRUE(throws_input_error([&] { idx_count(p); }, {p}));
}

TEST_F(IdxTest, RejectsBadMagicShowingTheBytes) {
  for (const std::string& p : write_both("zip", "PK\x03\x04 not an IDX file")) {
    EXPECT_TRUE(rejected(p, [&] { idx_count(p); },
                         {"not an IDX file", "starts with 4 bytes [50 4b 03 04]"}));
  }
  for (const std::string& p : write_both("tiny", std::string("\0\0", 2))) {
    EXPECT_TRUE(rejected(p, [&] { idx_count(p); }, {"not an IDX file", "2 bytes [00 00]"}));
  }
  const std::string empty = write_plain("empty", "");
  EXPECT_TRUE(rejected(empty, [&] { idx_count(empty); }, {"not an IDX file", "0 bytes []"}));
}

TEST_F(IdxTest, RejectsACorruptOrCutGzipStream) {
  // A gzip header, then a deflate block of the reserved type 3.
  const std::string corrupt =
      write_plain("corrupt.gz", std::string("\x1f\x8b\x08\0\0\0\0\0\0\x03\xff\xff\xff", 13));
  EXPECT_TRUE(rejected(corrupt, [&] { idx_count(corrupt); }, {"read error", "invalid block type"}));

  const std::string whole = write_gz("whole.gz", idx_file({5}, label_data()));
  std::ifstream in(whole, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string cut = write_plain("cut.gz", bytes.substr(0, bytes.size() - 10));
  EXPECT_TRUE(rejected(cut,
                       [&] {
                         read_idx_labels(cut, {0, 5});
                       },
                       {"read error", "unexpected end of file"}));
}

TEST_F(IdxTest, RejectsTypeCodesOtherThanUnsignedByte) {
  const std::string p = write_gz("float.gz", idx_file({5}, std::string(20, '\0'), 0x0D));
  EXPECT_TRUE(rejected(p, [&] { idx_count(p); },
                       {"type code 0x0d (float)", "expected 0x08 (unsigned byte)"}));
}

TEST_F(IdxTest, RejectsTheWrongNumberOfDimensions) {
  const std::string labels = write_gz("labels.gz", idx_file({5}, label_data()));
  EXPECT_TRUE(rejected(labels,
                       [&] {
                         read_idx_images(labels, {0, 1});
                       },
                       {"image file has 3 dimensions (count, rows, cols)", "this one has 1 (5)"}));
  const std::string images = write_gz("images.gz", idx_file({5, 28, 28}, image_data(5, 28, 28)));
  EXPECT_TRUE(rejected(images,
                       [&] {
                         read_idx_labels(images, {0, 1});
                       },
                       {"label file has 1 dimension (count)", "this one has 3 (5, 28, 28)"}));
  const std::string none = write_gz("none.gz", idx_file({}, ""));
  EXPECT_TRUE(rejected(none, [&] { idx_count(none); }, {"0 dimensions"}));
}

TEST_F(IdxTest, RejectsZeroAndOverflowingSizes) {
  const std::string zero = write_gz("zero.gz", idx_file({5, 0, 28}, ""));
  EXPECT_TRUE(rejected(zero, [&] { idx_count(zero); }, {"dimension 1 of (5, 0, 28) is 0"}));
  const std::string huge = write_gz("huge.gz", idx_file({0xffffffff, 0xffffffff, 28}, ""));
  EXPECT_TRUE(rejected(huge, [&] { idx_count(huge); },
                       {"data size of dimensions (4294967295, 4294967295, 28)", "overflows"}));
}

// A header's count is checked against the file's size before anything is sized by it: two
// 24-byte files used to make `train` zero-fill 4 GiB before it reported the truncation.
TEST_F(IdxTest, RejectsAHeaderThatPromisesMoreThanTheFileCanHold) {
  // 16 bytes of header and 8 of data; the header promises 2^31 images of 28 x 28.
  const std::string images = write_plain("images", idx_file({0x80000000u, 28, 28}, "01234567"));
  ASSERT_EQ(fs::file_size(images), 24u);
  for (auto read : {+[](const std::string& p) { read_idx_header(p); },
                    +[](const std::string& p) { read_idx_images(p, {0, 0x80000000}); }}) {
    EXPECT_TRUE(rejected(images, [&] { read(images); },
                         {"data truncated", "dimensions (2147483648, 28, 28)",
                          "need 1683627180032 bytes of data", "the file holds only 8"}));
  }
  const std::string labels = write_plain("labels", idx_file({0xffffffffu}, std::string(16, '\1')));
  EXPECT_TRUE(rejected(labels, [&] { read_idx_labels(labels, {0, 0xffffffff}); },
                       {"(4294967295)", "need 4294967295 bytes", "holds only 16"}));

  // Compressed, the same header fits in a few dozen bytes: a gzip file holds at most 1032 bytes
  // for each of its own (deflate's largest ratio).
  const std::string gz = write_gz("images.gz", idx_file({0x80000000u, 28, 28}, "01234567"));
  const auto gz_bytes = std::to_string(fs::file_size(gz));
  EXPECT_TRUE(rejected(gz, [&] { read_idx_images(gz, {0, 1}); },
                       {"dimensions (2147483648, 28, 28)", "need 1683627180032 bytes of data",
                        "more than a gzip file of " + gz_bytes + " bytes can hold",
                        "at most 1032 per byte"}));
  // Within that bound a short gzip file is read until its data ends, as before.
  const std::string short_gz = write_gz("short.gz", idx_file({10, 28, 28}, "01234567"));
  EXPECT_TRUE(rejected(short_gz, [&] { read_idx_images(short_gz, {0, 10}); },
                       {"data truncated", "need 7840 bytes", "holds only 8"}));
}

TEST_F(IdxTest, RejectsATruncatedHeader) {
  const std::string p = write_gz("header.gz", idx_file({5, 28, 28}, "").substr(0, 10));
  EXPECT_TRUE(rejected(p, [&] { idx_count(p); },
                       {"header truncated", "3 dimensions need 12 bytes", "holds only 6"}));
}

TEST_F(IdxTest, RejectsTruncatedDataSayingWhatIsThere) {
  for (const std::string& p :
       write_both("images", idx_file({5, 28, 28}, image_data(5, 28, 28).substr(0, 3000)))) {
    EXPECT_TRUE(rejected(p,
                         [&] {
                           read_idx_images(p, {0, 5});
                         },
                         {"data truncated", "need 3920 bytes", "holds only 3000"}));
  }
  const std::string labels = write_gz("labels.gz", idx_file({5}, "\x01\x02"));
  EXPECT_TRUE(rejected(labels,
                       [&] {
                         read_idx_labels(labels, {0, 5});
                       },
                       {"need 5 bytes", "holds only 2"}));
}

TEST_F(IdxTest, RejectsALabelOutsideTheTenClasses) {
  const std::string p = write_gz("labels.gz", idx_file({5}, std::string("\x01\x02\x03\x0c\x04")));
  EXPECT_TRUE(rejected(p,
                       [&] {
                         read_idx_labels(p, {0, 5});
                       },
                       {"label 12 of sample 3 is not a class 0-9"}));
  EXPECT_EQ(read_idx_labels(p, {0, 3}), (std::vector<uint8_t>{1, 2, 3}));
}

TEST_F(IdxTest, RejectsSampleRangesOutsideTheFile) {
  const std::string images = write_gz("images.gz", idx_file({5, 28, 28}, image_data(5, 28, 28)));
  const std::string labels = write_gz("labels.gz", idx_file({5}, label_data()));
  for (Range r : {Range{0, 6}, Range{-1, 2}, Range{3, 2}, Range{5, 6}}) {
    const std::string range = fmt::format("[{}, {})", r.begin, r.end);
    EXPECT_TRUE(rejected(images, [&] { read_idx_images(images, r); },
                         {"sample range " + range, "outside the file's 5 samples [0, 5)"}));
    EXPECT_TRUE(rejected(labels, [&] { read_idx_labels(labels, r); }, {"sample range " + range}));
  }
}

// ---- Fashion-MNIST helper and normalisation --------------------------------------------------

TEST_F(IdxTest, FashionMnistChecksThatImagesAndLabelsAgree) {
  const FashionMnist set{dir()};
  write_gz("train-images-idx3-ubyte.gz", idx_file({5, 28, 28}, image_data(5, 28, 28)));
  write_gz("train-labels-idx1-ubyte.gz", idx_file({4}, label_data().substr(0, 4)));
  write_gz("t10k-images-idx3-ubyte.gz", idx_file({2, 28, 28}, image_data(2, 28, 28)));
  write_gz("t10k-labels-idx1-ubyte.gz", idx_file({2}, label_data().substr(0, 2)));
  EXPECT_EQ(set.test_count(), 2);
  EXPECT_TRUE(rejected(set.train_images(), [&] { set.train_count(); },
                       {"5 images but " + set.train_labels() + " has 4 labels"}));
}

TEST(IdxNormalise, WritesScaledCenteredPixels) {
  const ImageSet set{2, 1, 2, {0, 255, 51, 102}};
  std::array<float, 4> out{};
  normalise_images(set, 0.5f, 0.25f, out.data());
  EXPECT_FLOAT_EQ(out[0], -2.0f);
  EXPECT_FLOAT_EQ(out[1], 2.0f);
  EXPECT_FLOAT_EQ(out[2], -1.2f);
  EXPECT_FLOAT_EQ(out[3], -0.4f);
  EXPECT_TRUE(throws_input_error([&] { normalise_images(set, 0.5f, 0.0f, out.data()); },
                                 {"std 0 is not positive"}));
}

// ---- The real data set -----------------------------------------------------------------------

TEST(FashionMnistData, TestSetHasTenThousandBalancedSamples) {
  const FashionMnist fm;
  if (!fs::exists(fm.test_labels())) {
    GTEST_SKIP() << fm.test_labels() << " is missing: install Debian's dataset-fashion-mnist "
                 << "(scripts/setup.sh does)";
  }
  ASSERT_EQ(fm.test_count(), 10000);
  const ImageSet images = read_idx_images(fm.test_images(), {0, 10000});
  EXPECT_EQ(images.count, 10000);
  EXPECT_EQ(images.rows, 28);
  EXPECT_EQ(images.cols, 28);
  const std::vector<uint8_t> labels = read_idx_labels(fm.test_labels(), {0, 10000});
  ASSERT_EQ(labels.size(), 10000u);
  std::array<int, 10> histogram{};
  for (uint8_t l : labels) ++histogram[l];
  for (int c = 0; c < 10; ++c) EXPECT_EQ(histogram[c], 1000) << "class " << c;
  EXPECT_EQ(labels[0], 9);  // the first test sample is an ankle boot
  EXPECT_EQ(read_idx_labels(fm.test_labels(), {9999, 10000})[0], labels[9999]);
}

}  // namespace
}  // namespace convgrid
