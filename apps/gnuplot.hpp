// Drawing pictures with gnuplot (Debian's gnuplot-nox): finding it, quoting, and running a
// script in a folder with its messages kept in a log.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace convgrid::cli {

// The executable `program` in a folder of PATH, or none.
std::optional<std::filesystem::path> find_on_path(std::string_view program);

// 'text' for gnuplot, whose single-quoted strings double a quote.
std::string gnuplot_quoted(std::string_view text);

// Writes `script` to DIR/NAME and runs gnuplot on it in DIR, its messages in DIR/gnuplot.log.
// Throws Error (one line, naming the log) when gnuplot fails.
void run_gnuplot(const std::filesystem::path& gnuplot, const std::filesystem::path& dir,
                 const std::string& name, const std::string& script);

}  // namespace convgrid::cli
