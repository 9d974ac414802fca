// What every harness shares: the rule that bad input may only end in convgrid::InputError (a
// one-line message naming the file or value), and the fuzz input as a file for parsers that
// read paths. Anything else a harness meets is a finding: it aborts, or lets the exception
// escape to std::terminate, and libFuzzer saves the input.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "convgrid/error.hpp"

namespace convgrid::fuzz {

// Aborts, printing why, when `ok` is false: a property of a parse that must hold.
inline void require(bool ok, std::string_view what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz finding: %.*s\n", static_cast<int>(what.size()), what.data());
    std::abort();
  }
}

// Runs f. An InputError is an accepted outcome when its message is one line that contains
// `names` (the file or "shape: "); every other exception escapes.
template <class F>
void only_input_errors(std::string_view names, F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    const std::string_view m = e.what();
    require(m.find_first_of("\n\r") == std::string_view::npos,
            std::string("InputError of more than one line: ") + e.what());
    require(m.find(names) != std::string_view::npos,
            std::string("InputError that does not name ") + std::string(names) + ": " + e.what());
  }
}

// A file of this process under $TMPDIR (or /tmp) that holds the current input; removed at exit.
class InputFile {
 public:
  explicit InputFile(std::string_view name)
      : path_((std::filesystem::temp_directory_path() /
               ("convgrid_fuzz_" + std::to_string(::getpid()) + "_" + std::string(name)))
                  .string()) {}
  ~InputFile() { std::remove(path_.c_str()); }

  // Replaces the file's contents with these bytes and returns its path.
  const std::string& write(const uint8_t* data, size_t size) const {
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    require(f != nullptr, "cannot create " + path_);
    require(size == 0 || std::fwrite(data, 1, size, f) == size, "cannot write " + path_);
    require(std::fclose(f) == 0, "cannot close " + path_);
    return path_;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace convgrid::fuzz
