// convgrid bench: every distinct ResNet-50 convolution layer, one training step (forward,
// backward-data, backward-weights), on one rank and on the job's P ranks with the data-parallel
// grid and with the grid of fewest words ("both" when they are the same). Prints step time, the share of time spent
// communicating, and parallel efficiency T1 / (P * TP); --json writes the same rows. With
// --panels B, the streamed algorithm on the fewest-words grid instead: its step time against its
// communication alone (local work skipped) and its local work alone, and their ratio
// step / max(communication, local work) (1.0: communication fully hidden).
#include <mpi.h>

#include <fstream>
#include <memory>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/output_paths.hpp"
#include "commands.hpp"
#include "kernel_flags.hpp"
#include "convgrid/error.hpp"
#include "layer_run.hpp"
#include "nn/resnet50_layers.hpp"
#include "plan/layer_planner.hpp"
#include "sim/compute.hpp"

namespace convgrid::cli {
namespace {

struct BenchOptions {
  int64_t batch = 32;
  std::string layers = ".*";
  int repeat = 3;
  std::string backend = "onednn";
  int64_t panels = 0;
  std::string json;
  std::string compute = "run";
  int threads = 0;  // kernel threads per rank; 0: fitted to the launch
};

const std::vector<Pass> kStep = {Pass::forward, Pass::backward_data, Pass::backward_weights};

struct StepFigures {
  double seconds = 0;  // sum over passes of the median pass time (the slowest rank's)
  double comm = 0, compute = 0;  // of the fastest repeats, the largest over ranks
  double words = 0;    // received by the busiest rank over the step
};

StepFigures time_step(const ConvShape& shape, const GridDims& dims, const Communicator& comm,
                      Backend backend, int repeat, int64_t panels = 0, bool local_work = true) {
  const ProcessGrid grid(dims, comm);
  LayerRun run(shape, grid, backend, panels, local_work);
  if (!sim::kernels_skipped()) run.generate(1);
  StepFigures f;
  double local[3] = {0, 0, 0};
  for (auto& [pass, t] : run.time_steps(comm, kStep, repeat, /*warm_up=*/!sim::kernels_skipped())) {
    f.seconds += median_of(t.seconds);
    local[0] += t.split.comm;
    local[1] += t.split.compute;
    local[2] += static_cast<double>(t.traffic.words());
  }
  double global[3];
  MPI_Allreduce(local, global, 3, MPI_DOUBLE, MPI_MAX, comm.raw());
  f.comm = global[0];
  f.compute = global[1];
  f.words = global[2];
  return f;
}

int run_bench(const BenchOptions& o) {
  apply_compute_flag(o.compute);
  const Communicator world = Communicator::world();
  use_kernel_threads(o.threads, world);
  const int P = world.size();
  check_output_file(world, o.json, "--json");
  if (o.repeat < 1) throw InputError(fmt::format("--repeat {} must be at least 1", o.repeat));
  const Backend backend = o.backend == "reference" ? Backend::reference : Backend::onednn;
  std::regex filter;
  try {
    filter = std::regex(o.layers);
  } catch (const std::regex_error&) {
    throw InputError(fmt::format("--layers '{}' is not a regular expression", o.layers));
  }
  const Communicator self = world.split(world.rank(), 0);

  nlohmann::json rows = nlohmann::json::array();
  if (world.rank() == 0) {
    fmt::print("convgrid bench: ResNet-50 layers, batch {}, {} ranks, one training step "
               "(fwd + bwd-data + bwd-weights), median of {}{}; compute {}\n",
               o.batch, P, o.repeat, sim::kernels_skipped() ? "" : " after a warm-up",
               sim::compute_mode_name(sim::compute_mode()));
    if (o.panels > 0) {
      fmt::print("{:<24} {:<8} {:<12} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8}\n", "layer", "panels",
                 "Pn,Pk,Pc,Ph,Pw", "step ms", "comm ms", "compute ms", "exposed ms", "1 rank ms", "step/max");
    } else {
      fmt::print("{:<24} {:<8} {:<12} {:>10} {:>10} {:>8} {:>7} {:>12}\n", "layer", "grid", "Pn,Pk,Pc,Ph,Pw",
                 "1 rank ms", "P ranks ms", "effic %", "comm %", "words/rank");
    }
  }
  for (const NamedConv& layer : resnet50_distinct_convs(o.batch)) {
    if (!std::regex_search(layer.name, filter)) continue;
    // One rank: rank 0 alone on its own communicator while the others wait.
    double t1 = 0;
    if (world.rank() == 0) t1 = time_step(layer.shape, GridDims{}, self, backend, o.repeat).seconds;
    MPI_Bcast(&t1, 1, MPI_DOUBLE, 0, world.raw());

    std::vector<std::pair<std::string, GridDims>> grids;
    if (P <= layer.shape.N) grids.push_back({"data", GridDims{P, 1, 1, 1, 1}});
    PlanOptions plan;
    plan.procs = P;
    plan.passes = kStep;
    plan.profile = load_profile("local-default");
    const GridDims fewest = plan_layer(layer.shape, plan).grid;
    if (grids.empty() || !(grids[0].second == fewest)) grids.push_back({"fewest", fewest});
    else grids[0].first = "both";
    if (o.panels > 0) {
      // The streamed algorithm on the fewest-words grid: the step against its communication alone
      // (local work skipped) and its local work alone (the kernels' own time in the step).
      const StepFigures f = time_step(layer.shape, fewest, world, backend, o.repeat, o.panels, true);
      const StepFigures c = time_step(layer.shape, fewest, world, backend, o.repeat, o.panels, false);
      const double bound = std::max(c.seconds, f.compute);
      // The step's time outside its local work: communication not hidden (and any other cost).
      // Below the communication alone, part of the communication ran behind the kernels.
      const double exposed = f.seconds - f.compute;
      if (world.rank() == 0) {
        fmt::print("{:<24} {:<8} {:<12} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>10.2f} {:>8.2f}\n",
                   layer.name, o.panels, fewest.to_string(), f.seconds * 1e3, c.seconds * 1e3,
                   f.compute * 1e3, exposed * 1e3, t1 * 1e3, f.seconds / bound);
        std::fflush(stdout);
        rows.push_back({{"layer", layer.name}, {"shape", layer.shape.to_string()}, {"grid", fewest.extents()},
                        {"panels", o.panels}, {"ranks", P}, {"step_s", f.seconds}, {"comm_alone_s", c.seconds},
                        {"compute_s", f.compute}, {"exposed_s", exposed}, {"one_rank_step_s", t1},
                        {"step_over_max", f.seconds / bound}});
      }
      continue;
    }
    for (const auto& [label, dims] : grids) {
      const StepFigures f = time_step(layer.shape, dims, world, backend, o.repeat);
      const double eff = t1 / (P * f.seconds);
      const double comm_share = f.comm / (f.comm + f.compute);
      if (world.rank() == 0) {
        fmt::print("{:<24} {:<8} {:<12} {:>10.2f} {:>10.2f} {:>8.1f} {:>7.1f} {:>12}\n", layer.name,
                   label, dims.to_string(), t1 * 1e3, f.seconds * 1e3, 100 * eff, 100 * comm_share,
                   static_cast<int64_t>(f.words));
        std::fflush(stdout);
        rows.push_back({{"layer", layer.name},
                        {"shape", layer.shape.to_string()},
                        {"grid_kind", label},
                        {"grid", dims.extents()},
                        {"ranks", P},
                        {"one_rank_step_s", t1},
                        {"step_s", f.seconds},
                        {"efficiency", eff},
                        {"comm_share", comm_share},
                        {"recv_words_max", static_cast<int64_t>(f.words)}});
      }
    }
  }
  if (world.rank() == 0 && !o.json.empty()) {
    std::ofstream f(o.json);
    f << nlohmann::json{{"benchmark", "resnet50_layers"}, {"rows", rows}}.dump(2) << "\n";
    if (!f) throw Error(fmt::format("--json {}: cannot write the file", o.json));
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, Registry& registry) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* sub = app.add_subcommand(
      "bench", "Time a training step of each ResNet-50 layer on 1 and P ranks (run under mpirun)");
  sub->add_option("--batch", o->batch, "Batch size N")->check(CLI::PositiveNumber);
  sub->add_option("--layers", o->layers, "Only layers whose name matches this regular expression (e.g. 3x3)");
  sub->add_option("--repeat", o->repeat, "Timed repeats after one warm-up");
  sub->add_option("--backend", o->backend, "Local kernels")->check(CLI::IsMember({"onednn", "reference"}));
  sub->add_option("--panels", o->panels,
                  "Stream the fewest-words grid in B panels: step time against communication alone and local work alone")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--json", o->json, "Write the rows as JSON");
  add_compute_flag(sub, o->compute);
  add_threads_flag(sub, o->threads);
  registry.emplace_back(sub, [o] { return run_bench(*o); });
}

}  // namespace convgrid::cli
