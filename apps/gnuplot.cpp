// Finding and running gnuplot.
#include "gnuplot.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "convgrid/error.hpp"

namespace convgrid::cli {
namespace fs = std::filesystem;
namespace {

// 'text' for a POSIX shell.
std::string shell_quoted(std::string_view text) {
  std::string q = "'";
  for (char ch : text) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

}  // namespace

std::optional<fs::path> find_on_path(std::string_view program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  const std::string_view dirs(path);
  size_t begin = 0;
  while (begin <= dirs.size()) {
    const size_t colon = std::min(dirs.find(':', begin), dirs.size());
    const std::string_view dir = dirs.substr(begin, colon - begin);
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    begin = colon + 1;
  }
  return std::nullopt;
}

std::string gnuplot_quoted(std::string_view text) {
  std::string q = "'";
  for (char ch : text) q += ch == '\'' ? std::string("''") : std::string(1, ch);
  return q + "'";
}

void run_gnuplot(const fs::path& gnuplot, const fs::path& dir, const std::string& name,
                 const std::string& script) {
  const fs::path script_path = dir / name;
  std::ofstream f(script_path);
  f << script;
  f.close();
  if (!f) throw Error(fmt::format("{}: cannot write the file", script_path.string()));
  const std::string command = fmt::format("cd {} && {} {} > gnuplot.log 2>&1", shell_quoted(dir.string()),
                                          shell_quoted(gnuplot.string()), shell_quoted(name));
  const int status = std::system(command.c_str());
  if (status == -1) throw Error(fmt::format("cannot start a shell to run {}", gnuplot.string()));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw Error(fmt::format("gnuplot failed on {} (status {}); its messages are in {}",
                            script_path.string(), WIFEXITED(status) ? WEXITSTATUS(status) : status,
                            (dir / "gnuplot.log").string()));
  }
}

}  // namespace convgrid::cli
