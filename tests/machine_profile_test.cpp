// Machine profiles (src/model/machine_profile): built-ins equal to profiles/*.json, strict JSON
// validation with errors naming the file and the key, lookup by name or path; and the modelled
// pass time (src/model/pass_cost) on hand-computed cases.
#include "model/machine_profile.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/pass_cost.hpp"
#include "throws_input_error.hpp"

namespace convgrid {
namespace {

namespace fs = std::filesystem;

// A fresh directory for one test, removed at its end (process id in the name: CTest may run
// the test cases of this file at once).
class TempDir {
 public:
  TempDir() {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    path_ =
        fs::temp_directory_path() / ("convgrid_profile_" + test + "_" + std::to_string(getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Changes the working directory for the scope.
class InDirectory {
 public:
  explicit InDirectory(const fs::path& dir) : old_(fs::current_path()) { fs::current_path(dir); }
  ~InDirectory() { fs::current_path(old_); }

 private:
  fs::path old_;
};

MachineProfile example() { return {"test", "a test machine", "made up", 1e-6, 1e-9, 1e9, false, false, {}}; }

// The example profile as JSON text with one key's value replaced (or the key dropped when
// `value` is empty).
std::string example_with(const std::string& key, const std::string& value) {
  nlohmann::ordered_json j = profile_to_json(example());
  if (value.empty())
    j.erase(key);
  else
    j[key] = nlohmann::ordered_json::parse(value);
  return j.dump();
}

TEST(MachineProfile, BuiltinsEqualTheFilesInProfiles) {
  const fs::path dir = fs::path(__FILE__).parent_path().parent_path() / "profiles";
  ASSERT_EQ(builtin_profile_names(),
            (std::vector<std::string>{"ib100-cpu", "nvlink-gpu", "local-default"}));
  for (const std::string& name : builtin_profile_names()) {
    const MachineProfile p = load_profile(name);
    EXPECT_EQ(p.name, name);
    EXPECT_EQ(p, read_profile((dir / (name + ".json")).string())) << name;
  }
}

TEST(MachineProfile, BuiltinNumbers) {
  const MachineProfile ib = load_profile("ib100-cpu");
  EXPECT_DOUBLE_EQ(1.0 / ib.beta_s_per_byte, 12.5e9);  // 100 Gb/s
  EXPECT_DOUBLE_EQ(ib.flop_rate, 180e9);
  const MachineProfile gpu = load_profile("nvlink-gpu");
  EXPECT_DOUBLE_EQ(1.0 / gpu.beta_s_per_byte, 25e9);  // 200 Gb/s between nodes
  EXPECT_TRUE(gpu.overlap);
  EXPECT_NEAR(1.0 / load_profile("local-default").beta_s_per_byte, 7.9e9, 1e6);
  // The node levels match the simulated clusters (platforms/README.md): a leaf switch of 32
  // hosts, two of the four 375 ns hops; a DGX node of 8 GPUs on NVLink at 300 GB/s.
  EXPECT_EQ(ib.node, (NodeLinks{32, 7.5e-7, 8e-11}));
  EXPECT_EQ(gpu.node.ranks, 8);
  EXPECT_NEAR(1.0 / gpu.node.beta_s_per_byte, 300e9, 1e6);
  EXPECT_EQ(load_profile("local-default").node.ranks, 0);
}

TEST(MachineProfile, WriteAndReadBack) {
  TempDir tmp;
  const std::string path = (tmp.path() / "p.json").string();
  write_profile(example(), path);
  EXPECT_EQ(read_profile(path), example());
  // A path is read as a file, whatever its name.
  EXPECT_EQ(load_profile(path), example());
  // With a node level, which the file then names.
  MachineProfile two_level = example();
  two_level.node = NodeLinks{8, 2e-6, 3e-12};
  write_profile(two_level, path);
  EXPECT_EQ(read_profile(path), two_level);
  EXPECT_EQ(read_profile(path).node.ranks, 8);
}

TEST(MachineProfile, NameFindsTheFileInProfiles) {
  TempDir tmp;
  MachineProfile local = example();
  local.name = "local";
  tmp.write("profiles/local.json", profile_to_json(local).dump());
  InDirectory in(tmp.path());
  EXPECT_EQ(load_profile("local"), local);
  EXPECT_TRUE(throws_input_error(
      [] { load_profile("nosuch"); },
      {"'nosuch'", "ib100-cpu, nvlink-gpu, local-default", "profiles/nosuch.json"}));
}

TEST(MachineProfile, BadFilesNameTheFileAndTheKey) {
  TempDir tmp;
  struct Case {
    std::string key, value, says;
  };
  const Case cases[] = {
      {"alpha_s", "", "missing key \"alpha_s\""},
      {"overlap", "", "missing key \"overlap\""},
      {"beta_s_per_byte", "\"fast\"", "\"beta_s_per_byte\" must be a number"},
      {"flop_rate", "0", "\"flop_rate\" must be positive, not 0"},
      {"alpha_s", "-1e-6", "\"alpha_s\" must be positive"},
      {"overlap", "1", "\"overlap\" must be true or false, not 1"},
      {"name", "3", "\"name\" must be a string"},
      {"name", "\"\"", "\"name\" is empty"},
      {"source", "null", "\"source\" must be a string, not null"},
      {"latency", "1", "\"latency\" must be a string, not 1"},
      {"latency", "\"ring\"", "\"latency\" must be \"per_message\" or \"per_step\", not \"ring\""},
      {"alpha", "1", "unknown key \"alpha\""},
      {"node", "8", "key \"node\" must be an object, not 8"},
      {"node", R"({"ranks": 0, "alpha_s": 1e-6, "beta_s_per_byte": 1e-10})",
       "\"ranks\" must be a whole number of at least 1, not 0"},
      {"node", R"({"ranks": 2.5, "alpha_s": 1e-6, "beta_s_per_byte": 1e-10})",
       "\"ranks\" must be a whole number of at least 1, not 2.5"},
      {"node", R"({"ranks": 8, "alpha_s": 1e-6})", "key \"node\": missing key \"beta_s_per_byte\""},
      {"node", R"({"ranks": 8, "alpha_s": 0, "beta_s_per_byte": 1e-10})", "\"alpha_s\" must be positive, not 0"},
      {"node", R"({"ranks": 8, "alpha_s": 1e-6, "beta_s_per_byte": 1e-10, "rank": 8})",
       "key \"node\": unknown key \"rank\""},
  };
  for (const Case& c : cases) {
    const std::string path = tmp.write("bad.json", example_with(c.key, c.value));
    EXPECT_TRUE(throws_input_error([&] { read_profile(path); }, {path, c.says}))
        << c.key << "=" << c.value;
  }
  const std::string not_json = tmp.write("not.json", "{\"name\": ");
  EXPECT_TRUE(throws_input_error([&] { read_profile(not_json); }, {not_json, "not valid JSON"}));
  // Numbers beyond a double escaped as nlohmann's out_of_range; deep nesting overflowed the
  // stack when the error printed the value.
  // (Put in as text: nlohmann itself refuses the one and would recurse on the other.)
  const auto with_text = [](const std::string& key, const std::string& text) {
    std::string json = example_with(key, "424242");
    return json.replace(json.find("424242"), 6, text);
  };
  const std::string huge = tmp.write("huge.json", with_text("alpha_s", "1e999"));
  EXPECT_TRUE(throws_input_error([&] { read_profile(huge); },
                                 {"profile file " + huge + ": not valid JSON: number overflow "
                                  "parsing '1e999'"}));
  const std::string deep = tmp.write(
      "deep.json", with_text("node", std::string(100000, '[') + std::string(100000, ']')));
  EXPECT_TRUE(throws_input_error(
      [&] { read_profile(deep); },
      {"profile file " + deep + ": arrays and objects nested more than 64 deep"}));
  const std::string twice = tmp.write("twice.json", "{\"name\": \"a\", \"name\": \"b\"}");
  EXPECT_TRUE(throws_input_error([&] { read_profile(twice); },
                                 {twice, "key 'name' appears twice in one object"}));
  const std::string array = tmp.write("array.json", "[1, 2]");
  EXPECT_TRUE(throws_input_error([&] { read_profile(array); }, {array, "not a JSON object"}));
  const std::string missing = (tmp.path() / "absent.json").string();
  EXPECT_TRUE(throws_input_error([&] { load_profile(missing); }, {missing, "cannot be read"}));
}

TEST(PassCost, AddsLatencyTransferAndCompute) {
  // alpha 1 us, beta 1 ns/B, 1 GFLOP/s; 1750 words (7000 B) in 3 messages, 20000 flops:
  // 3 us + 7 us + 20 us.
  MachineProfile m = example();
  const PassVolume v{1000, 500, 250, 3};
  const PassTime t = pass_time_parts(m, v, 2e4);
  EXPECT_DOUBLE_EQ(t.latency_s, 3e-6);
  EXPECT_DOUBLE_EQ(t.transfer_s, 7e-6);
  EXPECT_DOUBLE_EQ(t.compute_s, 2e-5);
  EXPECT_DOUBLE_EQ(pass_time(m, v, 2e4), 3e-5);
  // Overlap hides the transfer behind the kernel, never the latency.
  m.overlap = true;
  EXPECT_DOUBLE_EQ(pass_time(m, v, 2e4), 3e-6 + 2e-5);
  EXPECT_DOUBLE_EQ(pass_time(m, v, 2e3), 3e-6 + 7e-6);
}

TEST(PassCost, LatencyPerStepCountsTheRoundsOfMpisAlgorithms) {
  // The same pass, its 3 messages taking 40 rounds (a ring over 21 ranks and one over 20).
  MachineProfile m = example();
  PassVolume v{1000, 500, 250, 3};
  v.latency_steps = 39;
  EXPECT_DOUBLE_EQ(pass_time_parts(m, v, 0).latency_s, 3e-6);  // per message: the default
  m.latency_per_step = true;
  EXPECT_DOUBLE_EQ(pass_time_parts(m, v, 0).latency_s, 39e-6);
  EXPECT_DOUBLE_EQ(pass_time(m, v, 2e4), 39e-6 + 7e-6 + 2e-5);
  // The key round-trips, and a profile without it has one alpha per message.
  EXPECT_TRUE(profile_from_json(profile_to_json(m), "test").latency_per_step);
  EXPECT_FALSE(profile_from_json(nlohmann::json::parse(example_with("latency", "")), "test").latency_per_step);
  EXPECT_TRUE(load_profile("ib100-cpu").latency_per_step);
  EXPECT_TRUE(load_profile("nvlink-gpu").latency_per_step);
}

TEST(PassCost, LocalFlopsOfABlockIncludePaddingTaps) {
  // 3x3 pad 1, N=1, C=2, K=4, H=8, W=5, over Ph=2: each rank computes 4 output rows x 5 columns,
  // 9 taps each (padding taps too, as the kernel does): 2 * 4*2*20*9 = 2880 flops.
  const LayerLayout L(ConvShape::parse("N=1,C=2,H=8,W=5,K=4,R=3,S=3,pad=1"),
                      GridDims{1, 1, 1, 2, 1});
  EXPECT_DOUBLE_EQ(local_flops(L, GridCoord{0, 0, 0, 0, 0}), 2880.0);
  EXPECT_DOUBLE_EQ(local_flops(L, GridCoord{0, 0, 0, 1, 0}), 2880.0);
  // Pc=2 of C=3: blocks of 2 and 1 channels.
  const LayerLayout C(ConvShape::parse("N=1,C=3,H=4,W=4,K=2,R=1,S=1"), GridDims{1, 1, 2, 1, 1});
  EXPECT_DOUBLE_EQ(local_flops(C, GridCoord{0, 0, 0, 0, 0}), 2.0 * 2 * 2 * 16);
  EXPECT_DOUBLE_EQ(local_flops(C, GridCoord{0, 0, 1, 0, 0}), 2.0 * 2 * 1 * 16);
}

}  // namespace
}  // namespace convgrid
