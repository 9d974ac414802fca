// convgrid step: one training step of a whole network's convolution and fully connected layers,
// on the grids a plan gives them, with the redistributions between layers, on this job's ranks.
// The at-scale measurement behind docs/scale.md: run under smpirun (SMPI build), with
// --compute model, it executes ResNet-50 at 256 to 4096 simulated ranks.
//
// What moves, layer by layer in network order (SPEC sections 4 and 8):
//   each edge into the layer   activation: one all-to-all over all P ranks, from its producer's
//                              (pooled) Out distribution into this layer's In (or, for a residual
//                              shortcut, its Out); its gradient goes back the same way
//   forward                    In over the k-fibre, halos, Ker over the nhw-fibre, partial Out
//                              reduce-scattered over the c-fibre
//   backward-data              dOut over the c-fibre, partial dIn reduce-scattered over the k-fibre
//                              (not for the layer that reads the network's input: training skips
//                              it, and so does its plan, passes_in_network)
//   backward-weights           partial dKer reduce-scattered over the nhw-fibre
// Each phase starts at a barrier and ends when its slowest rank is done (MPI_Wtime: simulated time
// under SMPI; a barrier's own latency is not counted); the step's time is their sum, as the
// model's is. Every rank checks its received words against the model, pass by
// pass and edge by edge, and the command fails when any rank differs.
//
// The plan is made once, by rank 0, and its grids and panels are broadcast (4096 ranks planning
// the same network would cost 4096 times one plan); the modelled times are rank 0's plan's.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <array>
#include <fstream>
#include <map>
#include <numeric>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "comm/collective_check.hpp"
#include "comm/communicator.hpp"
#include "io/output_paths.hpp"
#include "commands.hpp"
#include "kernel_flags.hpp"
#include "convgrid/error.hpp"
#include "grid/process_grid.hpp"
#include "layer_run.hpp"
#include "model/grid_volume.hpp"
#include "model/redistribution.hpp"
#include "model/streamed_volume.hpp"
#include "network_flags.hpp"
#include "nn/load_network.hpp"
#include "plan/network_planner.hpp"
#include "plan/plan_broadcast.hpp"
#include "plan_flags.hpp"
#include "sim/compute.hpp"
#include "sim/phase_start.hpp"
#include "train/box_exchange.hpp"

namespace convgrid::cli {
namespace {

struct StepOptions {
  std::string network = "resnet50";
  std::optional<Activation> input_shape;  // --input-shape
  int64_t batch = 256;
  std::string strategy = "planner";  // planner | data | hybrid
  PlanFlags plan;
  std::string compute = "run";
  int threads = 0;  // kernel threads per rank; 0: fitted to the launch
  std::string backend = "onednn";
  std::string json;
};

constexpr std::array<Pass, 3> kPasses{Pass::forward, Pass::backward_data, Pass::backward_weights};

// One phase's figures on this rank: words received as counted and as modelled, seconds.
struct Phase {
  int64_t measured = 0, model = 0;
  double seconds = 0;
};

struct LayerResult {
  std::vector<Phase> passes;  // the layer's passes in a step (passes_in_network), in order
  // Each redistribution into the layer, each direction: the activation, then its gradient
  // (kept apart, as the model takes the busiest rank of each).
  std::vector<Phase> edges;
};

// One redistribution into a layer, set up once for both directions: the exchange, this rank's
// storage on each side, and the words the model says it receives each way.
struct Edge {
  Placement from, to;
  BoxExchange exchange;
  Buffer held, wanted;
  int64_t forward_model = 0, backward_model = 0;

  Edge(const Communicator& world, Placement from_placement, Placement to_placement)
      : from(std::move(from_placement)),
        to(std::move(to_placement)),
        exchange(world, from.tensor(), [this](int64_t r) { return from.slice(r); }, to.tensor(),
                 [this](int64_t r) { return to.slice(r); }),
        held(exchange.held_size()),
        wanted(exchange.wanted_size()) {
    const Slice mine_held = from.slice(world.rank()), mine_wanted = to.slice(world.rank());
    const int64_t common = slice_overlap(mine_wanted, to.tensor(), mine_held, from.tensor());
    forward_model = mine_wanted.size() - common;
    backward_model = mine_held.size() - common;
  }
};

std::vector<std::unique_ptr<Edge>> edges_into(const Communicator& world, const NetworkLayerPlan& layer,
                                              const std::vector<ConvShape>& shapes,
                                              const std::vector<LayerPlan>& choices, size_t i) {
  std::vector<std::unique_ptr<Edge>> edges;
  const LayerLayout to_layout(shapes[i], choices[i].grid);
  for (const EdgeFigures& e : layer.edges_in) {
    const LayerLayout from_layout(shapes[e.from_index], choices[e.from_index].grid);
    edges.push_back(std::make_unique<Edge>(
        world, Placement::pooled_output_of(from_layout, e.pooled.H, e.pooled.W),
        e.residual ? Placement::output_of(to_layout) : Placement::input_of(to_layout)));
  }
  return edges;
}

// Each edge in one direction: the activation forward, or (as the backward pass would, after
// the layer's passes) its gradient back, each from a common start until this rank is done.
std::vector<Phase> run_edges(const Communicator& world, std::vector<std::unique_ptr<Edge>>& edges, bool backward) {
  std::vector<Phase> phases;
  for (std::unique_ptr<Edge>& e : edges) {
    TrafficCounter traffic;
    const double t0 = sim::start_together(world);
    if (!backward) {
      e->exchange.forward(e->held.data(), e->wanted.data(), traffic);
    } else {
      e->exchange.reverse_add(e->wanted.data(), e->held.data(), traffic);
    }
    const double seconds = MPI_Wtime() - t0;  // the slowest rank's is the phase's
    MPI_Barrier(world.raw());
    phases.push_back({traffic.traffic().words(), backward ? e->backward_model : e->forward_model, seconds});
  }
  return phases;
}

LayerResult run_layer(const Communicator& world, const NetworkLayerPlan& layer, const std::vector<ConvShape>& shapes,
                      const std::vector<LayerPlan>& choices, size_t i, const std::vector<Pass>& passes,
                      Backend backend) {
  LayerResult result;
  std::vector<std::unique_ptr<Edge>> edges = edges_into(world, layer, shapes, choices, i);
  result.edges = run_edges(world, edges, /*backward=*/false);
  const ProcessGrid grid(choices[i].grid, world);
  const int64_t panels = choices[i].panels;
  LayerRun run(shapes[i], grid, backend, panels);
  if (!sim::kernels_skipped()) run.generate(1);
  // A warm-up step first (oneDNN compiles, buffers are touched) unless the kernels are skipped.
  std::map<Pass, PassTiming> timing = run.time_steps(world, passes, 1, /*warm_up=*/!sim::kernels_skipped());
  Held held;
  for (const Pass pass : passes) {
    const PassVolume model = panels > 0 ? streamed_pass_volume(run.layout(), grid.coord(), pass, panels)
                                        : grid_pass_volume(run.layout(), grid.coord(), pass, held);
    held = held_after(pass, held);
    result.passes.push_back({timing[pass].traffic.words(), model.words(), timing[pass].own_seconds});
  }
  const std::vector<Phase> back = run_edges(world, edges, /*backward=*/true);
  result.edges.insert(result.edges.end(), back.begin(), back.end());
  return result;
}

// Largest over ranks, at rank 0.
int64_t max_at_root(const Communicator& world, int64_t value) {
  int64_t out = value;
  MPI_Reduce(&value, &out, 1, MPI_INT64_T, MPI_MAX, 0, world.raw());
  return out;
}

int run_step(const StepOptions& o) {
  apply_compute_flag(o.compute);
  const Communicator world = Communicator::world();
  use_kernel_threads(o.threads, world);
  const bool root = world.rank() == 0;
  family_of(o.strategy);  // InputError for an unknown one, before any work
  check_output_file(world, o.json, "--json");
  const Network net = load_network(o.network, o.input_shape);
  for (const Layer& l : net.layers()) {  // their moves are joins, not one layer's input: train runs them
    if (l.kind == LayerKind::concat || l.kind == LayerKind::scale) {
      throw InputError(fmt::format("step moves layers' inputs and residual shortcuts; network '{}' has the {} "
                                   "layer '{}', whose moves convgrid train runs",
                                   net.name(), to_string(l.kind), l.name));
    }
  }
  const Backend backend = o.backend == "reference" ? Backend::reference : Backend::onednn;
  const std::vector<ComputeLayer> compute = net.compute_layers();
  std::vector<ConvShape> shapes;
  for (const ComputeLayer& c : compute) shapes.push_back(conv_shape(net.layers()[c.layer], o.batch));

  std::optional<NetworkPlan> plan;
  std::string error;
  if (root) {
    try {
      NetworkPlanOptions no;
      PlanFlags flags = o.plan;
      flags.passes = "train";
      no.layer = plan_options(flags, world.size());
      no.layer.engine = backend;
      no.batch = o.batch;
      no.family = family_of(o.strategy);
      plan = plan_network(net, no);
    } catch (const InputError& e) {
      error = e.what();
    }
  }
  collective_check(world, error.empty(), error);
  // What each layer runs on: rank 0's plan; the other ranks hold its grids and panels.
  std::vector<LayerPlan> choices;
  if (plan) choices = plan->layer_plans();
  broadcast_plan_choices(world, shapes, choices);
  // Every rank needs the edges (which layers feed which, pooled how): the same on every rank, and
  // cheap to plan with every layer's grid fixed (a family of one grid per layer).
  std::vector<NetworkLayerPlan> layers(compute.size());
  if (root) layers = plan->layers;
  {
    // The edges' structure (from index, pooled extents, residual) does not depend on the grids:
    // rank 0 sends it. Four integers per edge.
    std::vector<int64_t> flat;
    if (root) {
      for (size_t i = 0; i < layers.size(); ++i) {
        for (const EdgeFigures& e : layers[i].edges_in) {
          flat.insert(flat.end(), {static_cast<int64_t>(i), static_cast<int64_t>(e.from_index), e.residual ? 1 : 0,
                                   e.pooled.C, e.pooled.H, e.pooled.W});
        }
      }
    }
    int64_t n = static_cast<int64_t>(flat.size());
    MPI_Bcast(&n, 1, MPI_INT64_T, 0, world.raw());
    flat.resize(static_cast<size_t>(n));
    MPI_Bcast(flat.data(), static_cast<int>(n), MPI_INT64_T, 0, world.raw());
    if (!root) {
      for (size_t j = 0; j + 6 <= flat.size(); j += 6) {
        EdgeFigures e;
        e.from_index = static_cast<size_t>(flat[j + 1]);
        e.residual = flat[j + 2] != 0;
        e.pooled = {flat[j + 3], flat[j + 4], flat[j + 5]};
        layers[static_cast<size_t>(flat[j])].edges_in.push_back(e);
      }
    }
  }

  nlohmann::json report;
  if (root) {
    fmt::print("convgrid step  {} at batch {} on {} ranks, plan {} ({}), profile {}, compute {}\n", net.name(),
               o.batch, world.size(), o.strategy, to_string(family_of(o.strategy)), o.plan.profile, o.compute);
    fmt::print("{:<24} {:<16} {:>6} {:>14} {:>14} {:>12} {:>12}\n", "layer", "grid", "panels", "words", "model words",
               "time ms", "model ms");
  }
  bool all_equal = true;
  double step_s = 0, step_model_s = 0;
  int64_t step_words = 0;
  for (size_t i = 0; i < compute.size(); ++i) {
    // The layer's passes as in training: the first layer has no backward-data.
    const std::vector<Pass> layer_passes = passes_in_network(compute[i], {kPasses.begin(), kPasses.end()});
    const LayerResult r = run_layer(world, layers[i], shapes, choices, i, layer_passes, backend);
    // Each phase's words and seconds: the passes, then every edge in each direction.
    const size_t n = layer_passes.size();
    std::vector<Phase> phases(r.passes.begin(), r.passes.end());
    phases.insert(phases.end(), r.edges.begin(), r.edges.end());
    int64_t mismatch = 0;
    std::vector<int64_t> w, wmax(phases.size());
    std::vector<double> s, smax(phases.size());
    for (const Phase& p : phases) {
      mismatch |= p.measured != p.model ? 1 : 0;
      w.push_back(p.measured);
      s.push_back(p.seconds);
    }
    // The largest over ranks of each (the model's figures are the busiest rank's per phase).
    MPI_Reduce(w.data(), wmax.data(), static_cast<int>(w.size()), MPI_INT64_T, MPI_MAX, 0, world.raw());
    MPI_Reduce(s.data(), smax.data(), static_cast<int>(s.size()), MPI_DOUBLE, MPI_MAX, 0, world.raw());
    const int64_t any_mismatch = max_at_root(world, mismatch);
    const auto sum_from = [](const auto& v, size_t first) {
      return std::accumulate(v.begin() + static_cast<std::ptrdiff_t>(first), v.end(), decltype(v[0] + v[0]){});
    };
    if (root) {
      const NetworkLayerPlan& l = layers[i];
      const int64_t edge_words = sum_from(wmax, n);
      const double edge_s = sum_from(smax, n);
      const int64_t layer_words = sum_from(wmax, 0);
      const int64_t model_words = l.plan.words() + l.redistribution_words();
      const double layer_s = sum_from(smax, 0);
      const double model_s = l.plan.time_s() + l.redistribution_time_s();
      all_equal = all_equal && any_mismatch == 0;
      step_s += layer_s;
      step_model_s += model_s;
      step_words += layer_words;
      fmt::print("{:<24} {:<16} {:>6} {:>14} {:>14} {:>12.3f} {:>12.3f}{}\n", l.name, choices[i].grid.to_string(),
                 choices[i].panels, layer_words, model_words, 1e3 * layer_s, 1e3 * model_s,
                 any_mismatch ? "  WORDS DIFFER FROM THE MODEL ON SOME RANK" : "");
      std::fflush(stdout);  // a layer at a time: long simulated runs show their progress
      nlohmann::json passes = nlohmann::json::array();
      for (size_t p = 0; p < n; ++p) {
        passes.push_back({{"pass", pass_name(l.plan.passes[p].pass)},
                          {"words_max", wmax[p]},
                          {"model_words_max", l.plan.passes[p].volume.max_words},
                          {"seconds", smax[p]},
                          {"model_seconds", l.plan.passes[p].time_s}});
      }
      report["layers"].push_back({{"name", l.name},
                                  {"grid", choices[i].grid.to_string()},
                                  {"panels", choices[i].panels},
                                  {"words_max", layer_words},
                                  {"model_words_max", model_words},
                                  {"words_equal_model_on_every_rank", any_mismatch == 0},
                                  {"seconds", layer_s},
                                  {"model_seconds", model_s},
                                  {"redistribution_words_max", edge_words},
                                  {"model_redistribution_words_max", l.redistribution_words()},
                                  {"redistribution_seconds", edge_s},
                                  {"model_redistribution_seconds", l.redistribution_time_s()},
                                  {"passes", passes}});
    }
  }
  int64_t equal = all_equal ? 1 : 0;
  MPI_Bcast(&equal, 1, MPI_INT64_T, 0, world.raw());
  if (root) {
    fmt::print("step: {} words (busiest rank per phase, summed), {:.3f} ms; model {:.3f} ms ({:.2f}x); words equal "
               "the model on every rank: {}\n",
               step_words, 1e3 * step_s, 1e3 * step_model_s, step_model_s > 0 ? step_s / step_model_s : 0.0,
               all_equal ? "yes" : "NO");
    report["network"] = net.name();
    report["batch"] = o.batch;
    report["ranks"] = world.size();
    report["plan"] = o.strategy;
    report["profile"] = o.plan.profile;
    report["compute"] = o.compute;
    report["step_seconds"] = step_s;
    report["model_step_seconds"] = step_model_s;
    report["step_words"] = step_words;
    report["words_equal_model_on_every_rank"] = all_equal;
    if (!o.json.empty()) {
      std::ofstream f(o.json);
      f << report.dump(2) << "\n";
      if (!f) throw InputError(fmt::format("--json {}: cannot write", o.json));
    }
  }
  return equal ? 0 : 2;
}

}  // namespace

void add_step_command(CLI::App& app, Registry& registry) {
  auto o = std::make_shared<StepOptions>();
  CLI::App* sub = app.add_subcommand(
      "step", "One training step of a network's conv and fc layers on their planned grids, with the "
              "redistributions between them: words against the model on every rank, time against the model");
  sub->add_option("--network", o->network, "Built-in network (resnet50, vgg16, fmnist), JSON file or ONNX model (.onnx)");
  add_input_shape_flag(sub, o->input_shape);
  sub->add_option("--batch", o->batch, "Batch size");
  sub->add_option("--plan", o->strategy, "planner (every grid), data (data parallelism), hybrid (best batch x spatial) or channel (channel x filter)");
  sub->add_option("--objective", o->plan.objective, "Planner objective: volume or time")
      ->check(CLI::IsMember({"volume", "time"}));
  sub->add_option("--profile", o->plan.profile, "Machine profile of the modelled times");
  sub->add_option("--backend", o->backend, "Local kernels")->check(CLI::IsMember({"onednn", "reference"}));
  add_compute_flag(sub, o->compute);
  add_threads_flag(sub, o->threads);
  sub->add_option("--json", o->json, "Write the figures as JSON");
  registry.emplace_back(sub, [o] { return run_step(*o); });
}

}  // namespace convgrid::cli
