// A file written to a temporary name and renamed into place (see atomic_file.hpp).
#include "io/atomic_file.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include "convgrid/error.hpp"

namespace convgrid {
namespace {

namespace fs = std::filesystem;

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

// Writes every byte of `parts` and makes them durable; false on failure (errno says why).
bool write_all(std::FILE* f, const std::vector<std::string_view>& parts) {
  for (std::string_view p : parts) {
    if (!p.empty() && std::fwrite(p.data(), 1, p.size(), f) != p.size()) return false;
  }
  return std::fflush(f) == 0 && ::fsync(fileno(f)) == 0;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::vector<std::string_view>& parts) {
  const fs::path target(path);
  const std::string tmp =
      (target.parent_path() / fmt::format(".{}.{}.tmp", target.filename().string(), ::getpid()))
          .string();
  File f(std::fopen(tmp.c_str(), "wb"), &std::fclose);
  if (!f) throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  bool written = write_all(f.get(), parts);
  int err = errno;
  if (std::fclose(f.release()) != 0 && written) {
    written = false;
    err = errno;
  }
  if (!written) {
    std::remove(tmp.c_str());
    throw InputError(fmt::format("{}: write failed: {}", path, std::strerror(err)));
  }
  std::error_code ec;
  fs::rename(tmp, target, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw InputError(fmt::format("{}: cannot write: {}", path, ec.message()));
  }
}

}  // namespace convgrid
