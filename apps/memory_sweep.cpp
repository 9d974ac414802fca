// The words-against-memory trade-off of one layer (see memory_sweep.hpp).
#include "memory_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "gnuplot.hpp"
#include "model/lower_bound.hpp"

namespace convgrid::cli {
namespace {

namespace fs = std::filesystem;

std::string algorithm(const LayerPlan& p) {
  if (p.panels == 0) return "3D";
  return p.grid.Pc == 1 ? "2D" : "2.5D";
}

// The step's memory-independent bound (the sum of the passes' shares).
double step_bound(const LayerPlan& p) {
  double b = 0;
  for (const PassFigures& f : p.passes) b += f.lower_bound_words;
  return b;
}

}  // namespace

int run_memory_sweep(const MemorySweepOptions& c) {
  const ConvShape shape = ConvShape::parse(c.shape);
  const PlanOptions o = plan_options(c.flags, c.procs);
  if (c.procs < 1) throw InputError(fmt::format("--procs {} must be at least 1", c.procs));
  std::vector<LayerPlan> plans = memory_tradeoff(shape, o);
  std::sort(plans.begin(), plans.end(), [](const LayerPlan& a, const LayerPlan& b) {
    return a.memory_bytes != b.memory_bytes ? a.memory_bytes < b.memory_bytes : a.words() < b.words();
  });
  // The frontier: each plan that receives fewer words than every plan needing no more memory.
  std::vector<const LayerPlan*> frontier;
  for (const LayerPlan& p : plans) {
    if (frontier.empty() || p.words() < frontier.back()->words()) frontier.push_back(&p);
  }
  const double independent = step_bound(plans.front());
  const double passes = static_cast<double>(o.passes.size());
  const auto memory_bound = [&](int64_t bytes) {
    return passes * words_lower_bound_memory(shape, c.procs, static_cast<double>(bytes) / 4.0);
  };

  const fs::path dir = c.out.empty() ? fs::path("sweep-memory") : fs::path(c.out);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw InputError(fmt::format("--out {}: cannot create the folder: {}", dir.string(), ec.message()));
  {
    std::ofstream f(dir / "sweep.csv");
    f << "memory_bytes,words_per_rank,grid,panels,algorithm,frontier,memory_bound_words,bound_words\n";
    for (const LayerPlan& p : plans) {
      const bool on = std::find(frontier.begin(), frontier.end(), &p) != frontier.end();
      f << fmt::format("{},{},\"{}\",{},{},{},{:.0f},{:.0f}\n", p.memory_bytes, p.words(), p.grid.to_string(),
                       p.panels, algorithm(p), on ? 1 : 0, memory_bound(p.memory_bytes), independent);
    }
    if (!f) throw Error(fmt::format("{}: cannot write the file", (dir / "sweep.csv").string()));
  }

  fmt::print("convgrid simulate --sweep-memory  {} on {} ranks, passes {}: {} plans\n", shape.to_string(),
             c.procs, c.flags.passes, plans.size());
  fmt::print("{:>12} {:>14} {:<20} {:>7} {:<5} {:>16} {:>14}\n", "memory", "words", "grid", "panels",
             "algo", "bound at memory", "bound");
  for (const LayerPlan* p : frontier) {
    fmt::print("{:>12} {:>14} {:<20} {:>7} {:<5} {:>16.0f} {:>14.0f}\n", format_bytes(p->memory_bytes),
               p->words(), p->grid.to_string(), p->panels, algorithm(*p), memory_bound(p->memory_bytes),
               independent);
  }
  fmt::print("(the frontier: the fewest words under each memory; every plan is in {})\n",
             (dir / "sweep.csv").string());

  const std::optional<fs::path> gnuplot = find_on_path("gnuplot");
  if (!gnuplot) {
    fmt::print("gnuplot is not on PATH: plots skipped\n");
    return 0;
  }
  std::string points[3], line, bound;
  for (const LayerPlan& p : plans) {
    const int k = p.panels == 0 ? 0 : p.grid.Pc == 1 ? 1 : 2;
    points[k] += fmt::format("{} {}\n", p.memory_bytes, std::max<int64_t>(p.words(), 1));
  }
  for (const LayerPlan* p : frontier) line += fmt::format("{} {}\n", p->memory_bytes, std::max<int64_t>(p->words(), 1));
  const int64_t lo = plans.front().memory_bytes, hi = plans.back().memory_bytes;
  for (int i = 0; i <= 64; ++i) {
    const auto m = static_cast<int64_t>(lo * std::pow(static_cast<double>(hi) / lo, i / 64.0));
    const double b = memory_bound(m);
    if (b >= 1) bound += fmt::format("{} {}\n", m, b);
  }
  std::string script = fmt::format(
      "set terminal svg size 960,600 dynamic enhanced font 'sans,13' background rgb 'white'\n"
      "set output 'sweep.svg'\nset logscale xy\nset grid\nset key outside right top\n"
      "set title {} noenhanced\nset xlabel 'memory per rank (bytes)'\nset ylabel 'words received per rank'\n",
      gnuplot_quoted(fmt::format("{} on {} ranks, passes {}: words against memory", shape.to_string(),
                                 c.procs, c.flags.passes)));
  const char* names[] = {"grid algorithm (3D)", "streamed, Pc = 1 (2D)", "streamed, Pc > 1 (2.5D)"};
  const char* colours[] = {"#1f77b4", "#2ca02c", "#ff7f0e"};
  std::string plot = "plot ";
  for (int k = 0; k < 3; ++k) {
    if (points[k].empty()) continue;
    script += fmt::format("$p{} << EOD\n{}EOD\n", k, points[k]);
    plot += fmt::format("$p{} using 1:2 with points pointtype 7 pointsize 0.5 linecolor rgb '{}' title {}, ", k,
                        colours[k], gnuplot_quoted(names[k]));
  }
  script += fmt::format("$frontier << EOD\n{}EOD\n", line);
  plot += "$frontier using 1:2 with steps linewidth 3 linecolor rgb 'black' title 'fewest words under the memory'";
  if (!bound.empty()) {
    script += fmt::format("$bound << EOD\n{}EOD\n", bound);
    plot += ", $bound using 1:2 with lines dashtype 2 linewidth 2 linecolor rgb 'red' title 'memory-dependent bound'";
  }
  if (independent >= 1) {
    plot += fmt::format(", {} with lines dashtype 3 linewidth 2 linecolor rgb 'gray30' title 'memory-independent bound'",
                        independent);
  }
  script += plot + "\nunset output\n";
  run_gnuplot(*gnuplot, dir, "sweep.gp", script);
  fmt::print("wrote {}\n", (dir / "sweep.svg").string());
  return 0;
}

}  // namespace convgrid::cli
