// convgrid simulate: how the words each rank receives and the modelled time of one step of a
// network grow with P, for the planner and for the fixed grid families (SPEC sections 6-8;
// docs/simulate.md). For each P of --procs it plans the network five ways:
//   planner         plan_network over every grid (GridFamily::any); its InputError is the user's;
//   data_parallel   Pn = P, only while P <= batch;
//   batch_spatial   the best batch x spatial hybrid (Pk = Pc = 1);
//   channel_filter  channel and filter parallelism (Pn = Ph = Pw = 1);
//   lower_bound     the planner's plan's lower_bound_words(), a bound on words only.
// A family that has no plan at some P (plan_network throws InputError) leaves its cell empty.
// Writes DIR/simulate.csv, prints the table, and, when gnuplot is on PATH, draws DIR/words.svg and
// DIR/time.svg from DIR/simulate.gp. A model, not a run: no MPI; start it on one rank.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "gnuplot.hpp"
#include "memory_sweep.hpp"
#include "convgrid/error.hpp"
#include "model/machine_profile.hpp"
#include "network_flags.hpp"
#include "nn/load_network.hpp"
#include "plan/network_planner.hpp"
#include "plan_flags.hpp"

namespace convgrid::cli {
namespace {

namespace fs = std::filesystem;

PlanFlags train_flags() {
  PlanFlags f;
  f.passes = "train";
  return f;
}

struct SimulateCliOptions {
  std::string network;
  std::optional<Activation> input_shape;  // --input-shape
  std::string shape;
  bool sweep_memory = false;
  std::string procs;
  int64_t batch = 256;
  PlanFlags flags = train_flags();
  std::string out;  // default simulate-<network name>
};

enum class Strategy { planner, data_parallel, batch_spatial, channel_filter, lower_bound };

constexpr std::array kStrategies{Strategy::planner, Strategy::data_parallel, Strategy::batch_spatial,
                                 Strategy::channel_filter, Strategy::lower_bound};

// The name in the CSV and the table.
std::string_view to_string(Strategy s) {
  switch (s) {
    case Strategy::planner: return "planner";
    case Strategy::data_parallel: return "data_parallel";
    case Strategy::batch_spatial: return "batch_spatial";
    case Strategy::channel_filter: return "channel_filter";
    case Strategy::lower_bound: return "lower_bound";
  }
  return "?";
}

// The name in a plot's key.
std::string_view plot_title(Strategy s) {
  switch (s) {
    case Strategy::planner: return "planner";
    case Strategy::data_parallel: return "data parallel";
    case Strategy::batch_spatial: return "batch x spatial";
    case Strategy::channel_filter: return "channel / filter";
    case Strategy::lower_bound: return "lower bound";
  }
  return "?";
}

// What one strategy costs at one P. The lower bound has words only.
struct Cell {
  double words = 0;                    // busiest rank's, layers and edges and passes summed
  std::optional<double> time_s;        // modelled time of the step
  std::optional<int> fallback_layers;  // layers no grid of the family fits
};

// One P: a cell per strategy of kStrategies, empty where the strategy has no plan.
struct Row {
  int64_t procs = 0;
  std::array<std::optional<Cell>, kStrategies.size()> cells;

  std::optional<Cell>& operator[](Strategy s) { return cells[static_cast<size_t>(s)]; }
  const std::optional<Cell>& operator[](Strategy s) const { return cells[static_cast<size_t>(s)]; }
};

// --procs: a comma-separated list of positive integers, e.g. 8,64,512.
std::vector<int64_t> parse_procs(const std::string& text) {
  std::vector<int64_t> procs;
  size_t begin = 0;
  while (true) {
    const size_t comma = std::min(text.find(',', begin), text.size());
    const std::string_view item = std::string_view(text).substr(begin, comma - begin);
    int64_t p = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), p);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || p < 1) {
      throw InputError(fmt::format("--procs {}: '{}' is not a positive integer", text, item));
    }
    procs.push_back(p);
    if (comma == text.size()) return procs;
    begin = comma + 1;
  }
}

NetworkPlanOptions to_network_plan_options(const SimulateCliOptions& c) {
  NetworkPlanOptions o;
  o.layer = plan_options(c.flags, 1);
  o.batch = c.batch;
  return o;
}

Cell plan_cell(const NetworkPlan& plan) {
  const auto fallbacks = std::ranges::count_if(plan.layers, &NetworkLayerPlan::fallback);
  return {static_cast<double>(plan.words()), plan.time_s(), static_cast<int>(fallbacks)};
}

// The plan of a family at P, or none when the family has none there (plan_network's InputError).
std::optional<Cell> family_cell(const Network& net, NetworkPlanOptions options, GridFamily family) {
  options.family = family;
  try {
    return plan_cell(plan_network(net, options));
  } catch (const InputError&) {
    return std::nullopt;
  }
}

Row simulate_procs(const Network& net, NetworkPlanOptions options, int64_t procs) {
  options.layer.procs = procs;
  options.family = GridFamily::any;
  Row row{procs, {}};
  const NetworkPlan planner = plan_network(net, options);
  row[Strategy::planner] = plan_cell(planner);
  if (procs <= options.batch) {
    row[Strategy::data_parallel] = family_cell(net, options, GridFamily::data_parallel);
  }
  row[Strategy::batch_spatial] = family_cell(net, options, GridFamily::batch_spatial);
  row[Strategy::channel_filter] = family_cell(net, options, GridFamily::channel_filter);
  row[Strategy::lower_bound] = Cell{planner.lower_bound_words(), std::nullopt, std::nullopt};
  return row;
}

// The table: per P a line of words and a line of modelled milliseconds, a column per strategy;
// '*' marks a plan in which some layer fell back to every grid.
void print_simulate_header() {
  fmt::print("{:>7}  {:<8}", "P", "figure");
  for (Strategy s : kStrategies) fmt::print(" {:>15}", to_string(s));
  fmt::print("\n");
}

void print_row(const Row& row) {
  fmt::print("{:>7}  {:<8}", row.procs, "words");
  for (Strategy s : kStrategies) {
    const std::optional<Cell>& cell = row[s];
    const bool fallback = cell && cell->fallback_layers.value_or(0) > 0;
    fmt::print(" {:>15}", cell ? fmt::format("{:.0f}{}", cell->words, fallback ? "*" : "") : "-");
  }
  fmt::print("\n{:>7}  {:<8}", "", "time ms");
  for (Strategy s : kStrategies) {
    const std::optional<Cell>& cell = row[s];
    fmt::print(" {:>15}", cell && cell->time_s ? fmt::format("{:.3f}", *cell->time_s * 1e3) : "-");
  }
  fmt::print("\n");
}

void write_csv(const std::vector<Row>& rows, const fs::path& path) {
  std::ofstream f(path);
  f << "procs,strategy,words_per_rank,time_s,fallback_layers\n";
  for (const Row& row : rows) {
    for (Strategy s : kStrategies) {
      const std::optional<Cell>& cell = row[s];
      f << fmt::format("{},{},{},{},{}\n", row.procs, to_string(s),
                       cell ? fmt::format("{}", cell->words) : "",
                       cell && cell->time_s ? fmt::format("{}", *cell->time_s) : "",
                       cell && cell->fallback_layers ? fmt::format("{}", *cell->fallback_layers) : "");
    }
  }
  f.close();
  if (!f) throw Error(fmt::format("{}: cannot write the file", path.string()));
}

// Data parallelism is drawn wide: where it is the best batch x spatial grid the two lines are one.
std::string_view line_style(Strategy s) {
  switch (s) {
    case Strategy::data_parallel: return "with linespoints linewidth 5 pointsize 1.6";
    case Strategy::lower_bound: return "with lines dashtype 2 linewidth 2 linecolor 'black'";
    default: return "with linespoints linewidth 2";
  }
}

// What one plot draws: a figure of each row, for the strategies that have it.
enum class Figure { words, time };

// The plot commands of one picture, after a datablock per strategy with the points a log axis
// shows (positive values: on one rank nothing is received); empty when there is no point at all.
std::string plot_commands(const std::vector<Row>& rows, Figure figure) {
  std::string blocks, plots;
  for (Strategy s : kStrategies) {
    std::string points;
    for (const Row& row : rows) {
      const std::optional<Cell>& cell = row[s];
      if (!cell) continue;
      const std::optional<double> y = figure == Figure::words ? std::optional(cell->words) : cell->time_s;
      if (y && *y > 0) points += fmt::format("{} {}\n", row.procs, *y);
    }
    if (points.empty()) continue;
    const std::string block = fmt::format("${}_{}", figure == Figure::words ? "words" : "time", to_string(s));
    blocks += fmt::format("{} << EOD\n{}EOD\n", block, points);
    plots += fmt::format("{}{} using 1:2 {} title {}", plots.empty() ? "plot " : ", \\\n     ", block,
                         line_style(s), gnuplot_quoted(plot_title(s)));
  }
  return plots.empty() ? "" : blocks + plots + "\n";
}

// Writes DIR/simulate.gp and runs gnuplot on it in DIR (its messages go to DIR/gnuplot.log).
// Returns the pictures it drew.
std::vector<std::string> draw_plots(const std::vector<Row>& rows, const SimulateCliOptions& c,
                                    const std::string& network, const fs::path& dir,
                                    const fs::path& gnuplot) {
  const bool train = c.flags.passes == "train";
  const std::string about = fmt::format("{}, batch {}, passes {}", network, c.batch, c.flags.passes);
  std::string xtics;
  int64_t p_min = rows.front().procs, p_max = rows.front().procs;
  for (const Row& row : rows) {
    xtics += fmt::format("{}{}", xtics.empty() ? "" : ", ", row.procs);
    p_min = std::min(p_min, row.procs);
    p_max = std::max(p_max, row.procs);
  }

  std::string script = fmt::format(
      "# convgrid simulate: words.svg and time.svg from the figures of simulate.csv (held below).\n"
      "# Run in this folder: gnuplot simulate.gp\n"
      "set terminal svg size 960,600 dynamic enhanced font 'sans,13' background rgb 'white'\n"
      "set logscale xy\n"
      "set xrange [{}:{}]\n"
      "set xtics ({})\n"
      "set format y '10^{{%L}}'\n"
      "set grid xtics ytics mytics\n"
      "set key outside right top\n"
      "set xlabel 'ranks P'\n",
      p_min / 1.5, p_max * 1.5, xtics);
  std::vector<std::string> drawn;
  const std::string words = plot_commands(rows, Figure::words);
  if (!words.empty()) {
    script += fmt::format("set output 'words.svg'\nset title {} noenhanced\nset ylabel {}\n{}",
                          gnuplot_quoted(about + ": words received per rank"),
                          gnuplot_quoted("words per rank (busiest rank, per step)"), words);
    drawn.push_back("words.svg");
  }
  const std::string time = plot_commands(rows, Figure::time);
  if (!time.empty()) {
    script += fmt::format("set output 'time.svg'\nset title {} noenhanced\nset ylabel {}\n{}",
                          gnuplot_quoted(about + (train ? ": modelled time per training step"
                                                        : ": modelled time per forward pass")),
                          gnuplot_quoted("seconds"), time);
    drawn.push_back("time.svg");
  }
  script += "unset output\n";

  run_gnuplot(gnuplot, dir, "simulate.gp", script);
  return drawn;
}

int run_simulate(const SimulateCliOptions& c) {
  const std::vector<int64_t> procs = parse_procs(c.procs);
  if (c.sweep_memory || !c.shape.empty()) {
    if (c.shape.empty() || !c.sweep_memory || !c.network.empty()) {
      throw InputError("--sweep-memory takes --shape (one layer) and not --network");
    }
    if (procs.size() != 1) throw InputError(fmt::format("--sweep-memory takes one P (--procs {})", c.procs));
    return run_memory_sweep({c.shape, procs.front(), c.flags, c.out});
  }
  if (c.network.empty()) throw InputError("simulate needs --network (or --shape with --sweep-memory)");
  if (c.batch < 1) throw InputError(fmt::format("--batch {}: the batch must be at least 1", c.batch));
  const Network net = load_network(c.network, c.input_shape);
  const NetworkPlanOptions options = to_network_plan_options(c);
  const fs::path dir = c.out.empty() ? fs::path("simulate-" + net.name()) : fs::path(c.out);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    throw InputError(fmt::format("--out {}: cannot create the folder: {}", dir.string(), ec.message()));
  }

  fmt::print("convgrid simulate  {} at batch {}, passes {}; objective {}; profile {}\n", net.name(),
             c.batch, c.flags.passes, c.flags.objective, options.layer.profile.name);
  print_simulate_header();
  std::vector<Row> rows;
  for (int64_t p : procs) {
    try {
      rows.push_back(simulate_procs(net, options, p));
    } catch (const InputError& e) {
      throw InputError(fmt::format("P={}: {}", p, e.what()));
    }
    print_row(rows.back());
    std::fflush(stdout);
  }
  fmt::print("words: received by the busiest rank in one step; *: some layer fits no grid of the "
             "family and was planned over every grid\n");

  write_csv(rows, dir / "simulate.csv");
  fmt::print("wrote {}\n", (dir / "simulate.csv").string());
  const std::optional<fs::path> gnuplot = find_on_path("gnuplot");
  if (!gnuplot) {
    fmt::print("gnuplot is not on PATH: plots skipped\n");
    return 0;
  }
  for (const std::string& picture : draw_plots(rows, c, net.name(), dir, *gnuplot)) {
    fmt::print("wrote {}\n", (dir / picture).string());
  }
  return 0;
}

}  // namespace

void add_simulate_command(CLI::App& app, Registry& registry) {
  auto c = std::make_shared<SimulateCliOptions>();
  CLI::App* sub = app.add_subcommand("simulate",
                                     "Words per rank and modelled time of a network against P: the "
                                     "planner, fixed grid families and the lower bound");
  sub->add_option("--network", c->network, "A built-in network (resnet50, vgg16, fmnist), a JSON file or an ONNX model (.onnx)");
  add_input_shape_flag(sub, c->input_shape);
  sub->add_option("--shape", c->shape, "One layer (with --sweep-memory), in the --shape syntax of conv");
  sub->add_flag("--sweep-memory", c->sweep_memory, "Words against memory per rank for every plan of --shape on one P");
  sub->add_option("--procs", c->procs, "Rank counts P, comma-separated: e.g. 8,64,512,4096,32768")
      ->required();
  sub->add_option("--batch", c->batch, "Batch size N (default 256)");
  sub->add_option("--passes", c->flags.passes, "fwd, or train (forward and both backward passes)")
      ->check(CLI::IsMember({"fwd", "train"}));
  sub->add_option("--objective", c->flags.objective, "What the planner minimises: volume (words) or time")
      ->check(CLI::IsMember({"volume", "time"}));
  sub->add_option("--profile", c->flags.profile, "Machine profile: a built-in name or a JSON file");
  sub->add_option("--mem-per-rank", c->flags.mem_per_rank, "Per-rank memory limit: BYTES or e.g. 512MiB, 2GiB");
  sub->add_option("--out", c->out,
                  "Folder for simulate.csv, the gnuplot script and the SVGs (default simulate-<network>)");
  registry.emplace_back(sub, [c] { return run_simulate(*c); });
}

}  // namespace convgrid::cli
