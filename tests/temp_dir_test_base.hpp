// A GoogleTest fixture base that gives each test its own empty directory (CTest runs tests in
// parallel), removed afterwards; path(name) is a file in it.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace convgrid::test_data {

class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(std::string_view prefix) : prefix_(prefix) {}

  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + std::to_string(::getpid()) + "_" + std::string(info->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir() const { return dir_.string(); }
  std::string path(std::string_view name) const { return (dir_ / name).string(); }

 private:
  std::string prefix_;
  std::filesystem::path dir_;
};

}  // namespace convgrid::test_data
