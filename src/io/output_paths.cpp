// Output paths checked before the work (see output_paths.hpp).
#include "io/output_paths.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "comm/collective_check.hpp"
#include "convgrid/error.hpp"

namespace convgrid {
namespace fs = std::filesystem;

std::string output_file_problem(const std::string& path, const std::string& flag) {
  if (path.empty()) return {};
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::exists(st)) {
    if (fs::is_directory(st)) return fmt::format("{} {}: is a directory, not a file", flag, path);
    if (::access(path.c_str(), W_OK) != 0)
      return fmt::format("{} {}: cannot write: {}", flag, path, std::strerror(errno));
    return {};
  }
  fs::path parent = fs::path(path).parent_path();
  if (parent.empty()) parent = ".";
  const fs::file_status dir = fs::status(parent, ec);
  if (!fs::exists(dir)) return fmt::format("{} {}: the directory {} does not exist", flag, path, parent.string());
  if (!fs::is_directory(dir)) return fmt::format("{} {}: {} is not a directory", flag, path, parent.string());
  if (::access(parent.c_str(), W_OK | X_OK) != 0) {
    return fmt::format("{} {}: cannot create a file in {}: {}", flag, path, parent.string(),
                       std::strerror(errno));
  }
  return {};
}

std::string output_dir_problem(const std::string& dir, const std::string& flag) {
  if (dir.empty()) return {};
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    return fmt::format("{} {}: is not a directory", flag, dir);
  fs::create_directories(dir, ec);
  if (ec) return fmt::format("{} {}: cannot create the directory: {}", flag, dir, ec.message());
  // Permission bits do not tell (root writes anywhere, a read-only mount refuses everyone):
  // create a file and remove it.
  const std::string probe = (fs::path(dir) / fmt::format(".convgrid-probe-{}", ::getpid())).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return fmt::format("{} {}: cannot write in it: {}", flag, dir, std::strerror(errno));
  const bool wrote = ::write(fd, "x", 1) == 1;
  const std::string why = wrote ? "" : std::strerror(errno);
  ::close(fd);
  ::unlink(probe.c_str());
  if (!wrote) return fmt::format("{} {}: cannot write in it: {}", flag, dir, why);
  return {};
}

void check_output_file(const Communicator& world, const std::string& path, const std::string& flag) {
  const std::string problem = world.rank() == 0 ? output_file_problem(path, flag) : std::string();
  collective_check(world, problem.empty(), problem);
}

void check_output_dir(const Communicator& world, const std::string& dir, const std::string& flag) {
  const std::string problem = world.rank() == 0 ? output_dir_problem(dir, flag) : std::string();
  collective_check(world, problem.empty(), problem);
}

}  // namespace convgrid
