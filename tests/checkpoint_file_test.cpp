// Tests of checkpoint files (train/checkpoint_file, and the run checks of train/checkpoint's
// read_checkpoint): a round trip, then one test per kind of damage. Every header value is
// checked for its type and range before it is used: negative, fractional, huge or null
// counters, offsets whose sum overflows, tensors that overlap or leave data over, and the JSON
// failures of io/strict_json each give an InputError naming the file.
#include "train/checkpoint_file.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "temp_dir_test_base.hpp"
#include "throws_input_error.hpp"
#include "train/checkpoint.hpp"

namespace convgrid {
namespace {

// A valid header: tensors a (2 floats at 0) and a.momentum (2 floats at 2).
constexpr std::string_view kHeader =
    R"({"batch":4,"batch_in_epoch":2,"epoch":1,"epoch_correct":5,"epoch_loss_sum":3.25,)"
    R"("epoch_samples":8,"network":"tiny","seed":7,"step":5,"tensors":[)"
    R"({"count":2,"name":"a","offset":0,"shape":[2,1,1,1]},)"
    R"({"count":2,"name":"a.momentum","offset":2,"shape":[2,1,1,1]}]})";
constexpr size_t kFloats = 4;

// The bytes of a checkpoint: magic, the header's length, the header, `floats` floats 0.5 * i,
// then the right CRC-32 of it all.
std::string file_bytes(std::string_view header, size_t floats = kFloats) {
  std::string s = "CVGCKPT1";
  const uint64_t length = header.size();
  s.append(reinterpret_cast<const char*>(&length), 8);
  s += header;
  for (size_t i = 0; i < floats; ++i) {
    const float v = 0.5f * static_cast<float>(i);
    s.append(reinterpret_cast<const char*>(&v), 4);
  }
  const auto crc =
      static_cast<uint32_t>(crc32_z(0L, reinterpret_cast<const Bytef*>(s.data()), s.size()));
  s.append(reinterpret_cast<const char*>(&crc), 4);
  return s;
}

// kHeader with its first `from` replaced by `to`.
std::string header_with(std::string_view from, std::string_view to) {
  std::string h(kHeader);
  const size_t at = h.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? h : h.replace(at, from.size(), to);
}

::testing::AssertionResult rejected(const std::string& bytes,
                                    std::initializer_list<std::string_view> parts) {
  std::vector<std::string_view> all(parts);
  all.push_back("checkpoint x.ckpt is corrupt: ");
  return throws_input_error([&] { parse_checkpoint(bytes, "x.ckpt"); }, all);
}

TEST(CheckpointFile, RoundTrips) {
  const CheckpointFile file = parse_checkpoint(file_bytes(kHeader), "x.ckpt");
  EXPECT_EQ(file.state.network, "tiny");
  EXPECT_EQ(file.state.seed, 7u);
  EXPECT_EQ(file.state.batch_in_epoch, 2);
  EXPECT_EQ(file.state.epoch_loss_sum, 3.25);
  ASSERT_EQ(file.tensors.size(), 2u);
  EXPECT_EQ(file.tensors[1].name, "a.momentum");
  EXPECT_EQ(file.tensors[1].shape, (std::vector<int64_t>{2, 1, 1, 1}));
  EXPECT_EQ(file.tensors[1].values, (std::vector<float>{1.0f, 1.5f}));
  // The encoder writes the same bytes (keys sorted, no spaces) as the file it read.
  EXPECT_EQ(checkpoint_bytes(file), file_bytes(kHeader));
}

TEST(CheckpointFile, AnEmptyTensorRoundTrips) {
  // A tensor with an extent 0 holds no values (and its vector no storage): the reader copies
  // nothing (a fuzzing finding: memcpy was given a null destination, which UBSan reports).
  CheckpointFile file = parse_checkpoint(file_bytes(kHeader), "x.ckpt");
  file.tensors.push_back({"b.weight", {0, 3, 1, 1}, {}});
  const CheckpointFile back = parse_checkpoint(checkpoint_bytes(file), "x.ckpt");
  ASSERT_EQ(back.tensors.size(), 3u);
  EXPECT_EQ(back.tensors[2].name, "b.weight");
  EXPECT_EQ(back.tensors[2].shape, (std::vector<int64_t>{0, 3, 1, 1}));
  EXPECT_TRUE(back.tensors[2].values.empty());
  EXPECT_EQ(back.tensors[1].values, (std::vector<float>{1.0f, 1.5f}));
}

TEST(CheckpointFile, CountersMustBeWholeNumbersFrom0) {
  // Negative counters made the trainer index before its data order; doubles beyond int64 went
  // through an undefined float-to-integer cast; NaN is written as null.
  const std::pair<const char*, const char*> counters[] = {
      {"batch", "4"}, {"epoch", "1"},         {"batch_in_epoch", "2"},
      {"step", "5"},  {"epoch_correct", "5"}, {"epoch_samples", "8"}};  // as in kHeader
  // Each bad value and how the message shows it.
  const std::pair<const char*, const char*> bad[] = {
      {"-1", "-1"},
      {"-9223372036854775808", "-9223372036854775808"},
      {"2.5", "2.5"},
      {"1e300", "1e+300"},
      {"9223372036854775808", "9223372036854775808"},
      {"18446744073709551615", "18446744073709551615"},
      {"null", "null"},
      {"\"3\"", "\"3\""},
      {"[1]", "[1]"}};
  for (const auto& [key, value] : counters) {
    const std::string name = std::string("\"") + key + "\":";
    for (const auto& [text, shown] : bad) {
      SCOPED_TRACE(std::string(key) + " = " + text);
      EXPECT_TRUE(rejected(file_bytes(header_with(name + value, name + text)),
                           {std::string("header key \"") + key +
                            "\" must be a whole number in [0, 2^63), not " + shown}));
    }
  }
  EXPECT_TRUE(rejected(file_bytes(header_with("\"batch\":4", "\"batch\":0")), {"\"batch\" is 0"}));
  EXPECT_TRUE(rejected(file_bytes(header_with("\"epoch_correct\":5", "\"epoch_correct\":9")),
                       {"epoch_correct 9 is more than epoch_samples 8"}));
  EXPECT_TRUE(rejected(file_bytes(header_with("\"batch_in_epoch\":2", "\"batch_in_epoch\":6")),
                       {"batch_in_epoch 6 is more than step 5"}));
}

TEST(CheckpointFile, SeedLossAndNetworkHaveTheirTypes) {
  for (const char* bad : {"-1", "1.5", "null", "18446744073709551616"}) {
    EXPECT_TRUE(rejected(file_bytes(header_with("\"seed\":7", std::string("\"seed\":") + bad)),
                         {"header key \"seed\" must be a whole number in [0, 2^64)"}))
        << bad;
  }
  EXPECT_NO_THROW(parse_checkpoint(
      file_bytes(header_with("\"seed\":7", "\"seed\":18446744073709551615")), "x.ckpt"));
  EXPECT_TRUE(rejected(file_bytes(header_with("3.25", "null")),
                       {"header key \"epoch_loss_sum\" must be a finite number, not null"}));
  EXPECT_TRUE(rejected(file_bytes(header_with("\"tiny\"", "7")),
                       {"header key \"network\" must be a string, not 7"}));
  EXPECT_TRUE(rejected(file_bytes(header_with("\"step\":5,", "")), {"header has no key \"step\""}));
}

TEST(CheckpointFile, TensorsMustFillTheDataInOrder) {
  const std::pair<std::string, std::string> bad[] = {
      // offset + count overflowed; fractions and negatives were cast.
      {header_with("\"offset\":2", "\"offset\":4611686018427387904"),
       "at offset 4611686018427387904"},
      {header_with("\"count\":2,\"name\":\"a.momentum\"",
                   "\"count\":9223372036854775807,\"name\":\"a.momentum\""),
       "with 9223372036854775807 values"},
      {header_with("\"offset\":2", "\"offset\":-2"),
       "tensor 1 key \"offset\" must be a whole number"},
      {header_with("\"count\":2", "\"count\":2.0"),
       "tensor 0 key \"count\" must be a whole number"},
      {header_with("[2,1,1,1]", "[2.5,1,1,1]"), "tensor 0 (a) has the extent 2.5"},
      {header_with("[2,1,1,1]", "[-2,1,1,1]"), "tensor 0 (a) has the extent -2"},
      {header_with("[2,1,1,1]", "[2,1,1]"),
       "tensor 0 (a) key \"shape\" must be 4 extents, not [2,1,1]"},
      {header_with("[2,1,1,1]", "[4294967296,4294967296,4,1]"),
       "of shape [4294967296,4294967296,4,1]"},
      {header_with("[2,1,1,1]", "[1,1,1,1]"),
       "tensor 0 (a) of shape [1,1,1,1] at offset 0 with 2 values"},
      // Overlapping tensors made a small file allocate many times its size.
      {header_with("\"offset\":2", "\"offset\":0"), "from offset 2"},
      {header_with("{\"count\":2,\"name\":\"a\"", "{\"count\":2,\"nom\":\"a\""),
       "tensor 0 has no key \"name\""},
      {header_with("[{", "[7,{"), "tensor 0 is not an object but 7"},
      {header_with("\"tensors\":[", "\"tensors\":3,\"x\":["),
       "header key \"tensors\" must be a list, not 3"},
  };
  for (const auto& [header, says] : bad) {
    EXPECT_TRUE(rejected(file_bytes(header), {says})) << header;
  }
  EXPECT_TRUE(rejected(file_bytes(kHeader, 5), {"its tensors hold 4 floats but its data 5"}));
  std::string odd = file_bytes(kHeader);
  odd.insert(odd.size() - 4, "x");
  const auto crc = static_cast<uint32_t>(
      crc32_z(0L, reinterpret_cast<const Bytef*>(odd.data()), odd.size() - 4));
  std::memcpy(odd.data() + odd.size() - 4, &crc, 4);
  EXPECT_TRUE(rejected(odd, {"its 17 bytes of data are not a whole number of floats"}));
}

TEST(CheckpointFile, HeaderJsonFailuresAreNamed) {
  EXPECT_TRUE(rejected(file_bytes(header_with("3.25", "1e999")),
                       {"checkpoint x.ckpt is corrupt: header: not valid JSON: number overflow"}));
  EXPECT_TRUE(rejected(
      file_bytes(header_with("\"tiny\"", std::string(100000, '[') + std::string(100000, ']'))),
      {"header: arrays and objects nested more than 64 deep"}));
  EXPECT_TRUE(rejected(file_bytes(header_with("\"step\":5", "\"step\":5,\"step\":6")),
                       {"header: key 'step' appears twice"}));
  EXPECT_TRUE(rejected(file_bytes("[1, 2]", 0), {"the header is [1,2], not an object"}));
}

TEST(CheckpointFile, FramingIsChecked) {
  const std::string good = file_bytes(kHeader);
  EXPECT_TRUE(rejected(good.substr(0, 19), {"it has 19 bytes, fewer than the 20"}));
  EXPECT_TRUE(rejected("XVGCKPT1" + good.substr(8), {"does not start with CVGCKPT1"}));
  EXPECT_TRUE(rejected("not a checkpoint", {"does not start with CVGCKPT1"}));
  EXPECT_TRUE(rejected("CVGCK", {"does not start with CVGCKPT1"}));
  std::string flipped = good;
  flipped[30] ^= 1;
  EXPECT_TRUE(rejected(flipped, {"CRC-32"}));
  std::string length = good;
  const uint64_t huge = ~uint64_t{0} - 7;  // 16 + huge wrapped to 8 before
  std::memcpy(length.data() + 8, &huge, 8);
  const auto crc = static_cast<uint32_t>(
      crc32_z(0L, reinterpret_cast<const Bytef*>(length.data()), length.size() - 4));
  std::memcpy(length.data() + length.size() - 4, &crc, 4);
  EXPECT_TRUE(rejected(length, {"header length 18446744073709551608 goes beyond"}));
}

class CheckpointRead : public test_data::TempDirTest {
 protected:
  CheckpointRead() : TempDirTest("convgrid_checkpoint_") {}
  std::string write(std::string_view name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary).write(bytes.data(), std::ssize(bytes));
    return path(name);
  }
  // Reads checkpoint p into the shards of kHeader's tensor a (-1 until loaded).
  TrainState read(const std::string& p, const TrainState& expected, int64_t batches_per_epoch) {
    return read_checkpoint(p, expected, batches_per_epoch, params, momentum, state);
  }
  // The run kHeader's checkpoints are of.
  static TrainState tiny_run() {
    TrainState expected;
    expected.network = "tiny";
    expected.batch = 4;
    expected.seed = 7;
    return expected;
  }

  std::vector<float> a = std::vector<float>(2, -1.0f);
  std::vector<ParamShard> params = shards_of(a);
  std::vector<TrackedVector<float>> momentum{TrackedVector<float>(2, -1.0f)};
  std::vector<ParamShard> state;

 private:
  static std::vector<ParamShard> shards_of(std::vector<float>& values) {
    std::vector<ParamShard> p(1);
    p[0].name = "a";
    p[0].global = Box4{{Range{0, 2}, Range{0, 1}, Range{0, 1}, Range{0, 1}}};
    p[0].slice = Slice::whole(p[0].global);
    p[0].value = values;
    return p;
  }
};

TEST_F(CheckpointRead, FilesAreNamed) {
  const std::string p = write("x.ckpt", file_bytes(header_with("\"epoch\":1", "\"epoch\":-1")));
  EXPECT_TRUE(throws_input_error([&] { read_checkpoint_file(p); },
                                 {"checkpoint " + p + " is corrupt: header key \"epoch\""}));
  EXPECT_TRUE(throws_input_error([&] { read_checkpoint_file(path("absent.ckpt")); },
                                 {path("absent.ckpt") + ": cannot open for reading"}));
}

// A run resumes at batch_in_epoch and counts up to its batches per epoch: a checkpoint beyond
// that would never end its epoch (the trainer looped on evaluation for ever).
TEST_F(CheckpointRead, TheNextBatchMustLieWithinTheRunsEpoch) {
  const std::string p = write("x.ckpt", file_bytes(kHeader));
  EXPECT_TRUE(throws_input_error([&] { read(p, tiny_run(), 2); },
                                 {"checkpoint " + p +
                                  " resumes at batch 2 of an epoch but this "
                                  "run's epochs have 2 batches"}));
  EXPECT_EQ(a, (std::vector<float>{-1.0f, -1.0f}));  // nothing loaded
  EXPECT_EQ(read(p, tiny_run(), 3).step, 5);
  EXPECT_EQ(a, (std::vector<float>{0.0f, 0.5f}));
  EXPECT_EQ(momentum[0][1], 1.5f);
}

// The recipe (the options that shape the trajectory) must be an object of strings; a header
// without one is an older checkpoint's and reads as an empty recipe.
TEST(CheckpointFile, RecipeRoundTripsAndIsChecked) {
  CheckpointFile file = parse_checkpoint(file_bytes(kHeader), "x.ckpt");
  EXPECT_TRUE(file.state.recipe.empty());
  file.state.recipe = {{"lr", "0.05"}, {"flip", "on"}};
  EXPECT_EQ(parse_checkpoint(checkpoint_bytes(file), "x.ckpt").state.recipe, file.state.recipe);
  EXPECT_TRUE(rejected(file_bytes(header_with("\"seed\":7", "\"seed\":7,\"recipe\":[1]")),
                       {"header key \"recipe\" must be an object, not [1]"}));
  EXPECT_TRUE(rejected(file_bytes(header_with("\"seed\":7", "\"seed\":7,\"recipe\":{\"lr\":0.05}")),
                       {"recipe key \"lr\" must be a string, not 0.05"}));
}

// A checkpoint of another recipe is another run's: OtherRunCheckpoint naming the first option
// that differs, and nothing loaded. Without a recipe in the file nothing is compared.
TEST_F(CheckpointRead, AnotherRecipeIsAnotherRunsCheckpoint) {
  CheckpointFile file = parse_checkpoint(file_bytes(kHeader), "x.ckpt");
  file.state.recipe = {{"lr", "0.05"}, {"lr-schedule", "cosine"}, {"momentum", "0.9"}};
  const std::string p = write("x.ckpt", checkpoint_bytes(file));
  const std::string old = write("old.ckpt", file_bytes(kHeader));
  TrainState expected = tiny_run();
  expected.recipe = {{"lr", "0.1"}, {"lr-schedule", "constant"}, {"momentum", "0.9"}};
  const auto refused = [&](const std::string& what) {
    try {
      read(p, expected, 3);
    } catch (const OtherRunCheckpoint& e) {
      return std::string(e.what()).find(what) != std::string::npos
                 ? ::testing::AssertionSuccess()
                 : ::testing::AssertionFailure() << e.what();
    }
    return ::testing::AssertionFailure() << "not refused";
  };
  EXPECT_TRUE(refused("checkpoint " + p + " was written with --lr 0.05, this run has --lr 0.1"));
  expected.recipe["lr"] = "0.05";
  EXPECT_TRUE(refused("--lr-schedule cosine, this run has --lr-schedule constant"));
  expected.recipe["lr-schedule"] = "cosine";
  expected.recipe["epochs"] = "15";
  EXPECT_TRUE(refused("--epochs (not set), this run has --epochs 15"));
  EXPECT_EQ(a, (std::vector<float>{-1.0f, -1.0f}));  // nothing loaded
  expected.recipe.erase("epochs");
  EXPECT_EQ(read(p, expected, 3).recipe, file.state.recipe);
  EXPECT_EQ(read(old, expected, 3).step, 5);
}

}  // namespace
}  // namespace convgrid
