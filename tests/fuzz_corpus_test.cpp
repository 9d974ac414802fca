// The seed corpus of the fuzz harnesses (fuzz/corpus/<harness>/, written by fuzz/make_corpus.py)
// holds valid files: each one is read here by the parser its harness fuzzes, so that a change of
// format that invalidates the seeds fails in the ordinary suite, not only as weaker fuzzing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>

#include "convgrid/conv_shape.hpp"
#include "convgrid/npy.hpp"
#include "io/idx.hpp"
#include "model/machine_profile.hpp"
#include "nn/load_network.hpp"
#include "train/checkpoint_file.hpp"

namespace convgrid {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(__FILE__).parent_path().parent_path() / "fuzz" / "corpus";

std::string text_of(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void read_idx(const std::string& p) {
  const IdxHeader h = read_idx_header(p);
  if (h.dims.size() == 1) {
    read_idx_labels(p, {0, h.dims[0]});
  } else {
    read_idx_images(p, {0, h.dims[0]});
  }
}

TEST(FuzzCorpus, EverySeedIsValid) {
  const std::map<std::string, std::function<void(const std::string&)>> readers = {
      {"shape_string", [](const std::string& p) { ConvShape::parse(text_of(p)); }},
      {"npy_whole", [](const std::string& p) { read_npy(p); }},
      {"npy_slice", [](const std::string& p) { read_npy(p); }},
      {"idx_plain", read_idx},
      {"idx_gzip", read_idx},
      {"network_json", [](const std::string& p) { load_network(p); }},
      {"machine_profile", [](const std::string& p) { read_profile(p); }},
      {"checkpoint", [](const std::string& p) { read_checkpoint_file(p); }},
      {"onnx_model", [](const std::string& p) { load_network(p); }},
  };
  ASSERT_TRUE(fs::is_directory(kCorpus)) << kCorpus;
  for (const auto& [harness, read] : readers) {
    int seeds = 0;
    for (const auto& entry : fs::directory_iterator(kCorpus / harness)) {
      SCOPED_TRACE(entry.path().string());
      EXPECT_NO_THROW(read(entry.path().string()));
      ++seeds;
    }
    EXPECT_GE(seeds, 2) << harness;
  }
}

}  // namespace
}  // namespace convgrid
