// Output paths checked before the work: what each problem reads like, and that a check creates
// nothing it was not asked to (a file check) and leaves no probe behind (a directory check).
#include "io/output_paths.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace convgrid {
namespace {

namespace fs = std::filesystem;

class OutputPaths : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("convgrid-output-paths-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string at(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(OutputPaths, AFileInAWritableDirectoryIsFineAndNotCreated) {
  EXPECT_EQ(output_file_problem(at("log.json"), "--json"), "");
  EXPECT_FALSE(fs::exists(at("log.json")));
  std::ofstream(at("old.json")) << "{}";
  EXPECT_EQ(output_file_problem(at("old.json"), "--json"), "");
  EXPECT_EQ(output_file_problem("", "--json"), "");
}

TEST_F(OutputPaths, FileProblemsNameTheFlagAndThePath) {
  EXPECT_EQ(output_file_problem(at("gone/log.json"), "--json"),
            "--json " + at("gone/log.json") + ": the directory " + at("gone") + " does not exist");
  EXPECT_EQ(output_file_problem(dir_.string(), "--json"),
            "--json " + dir_.string() + ": is a directory, not a file");
  std::ofstream(at("plain")) << "x";
  EXPECT_EQ(output_file_problem(at("plain/log.json"), "--output"),
            "--output " + at("plain/log.json") + ": " + at("plain") + " is not a directory");
}

TEST_F(OutputPaths, ADirectoryIsCreatedAndLeftWithoutAProbe) {
  EXPECT_EQ(output_dir_problem(at("a/b"), "--checkpoint-dir"), "");
  EXPECT_TRUE(fs::is_directory(at("a/b")));
  EXPECT_TRUE(fs::is_empty(at("a/b")));
}

TEST_F(OutputPaths, DirectoryProblemsNameTheFlagAndThePath) {
  std::ofstream(at("plain")) << "x";
  const std::string p = output_dir_problem(at("plain/sub"), "--checkpoint-dir");
  EXPECT_EQ(p.rfind("--checkpoint-dir " + at("plain/sub") + ": cannot create the directory: ", 0), 0u)
      << p;
  EXPECT_EQ(output_dir_problem(at("plain"), "--checkpoint-dir"),
            "--checkpoint-dir " + at("plain") + ": is not a directory");
}

}  // namespace
}  // namespace convgrid
