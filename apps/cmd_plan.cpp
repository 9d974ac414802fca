// convgrid plan: the communication-optimal grid for a layer (--shape) or for every layer of a
// network (--network), with the busiest rank's and the mean words per pass next to the lower
// bound, memory, modelled time, what data parallelism would receive instead and, for a network,
// the redistribution into each layer. --json writes layers[] and totals.
#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "convgrid/error.hpp"
#include "network_flags.hpp"
#include "nn/load_network.hpp"
#include "plan_flags.hpp"
#include "plan/network_planner.hpp"
#include "train/training_memory.hpp"
#include "train/train_graph.hpp"
#include "train/training_job.hpp"

namespace convgrid::cli {
namespace {

struct PlanCliOptions {
  std::string shape;
  std::string network;
  std::optional<Activation> input_shape;  // --input-shape
  int64_t batch = 256;
  int64_t procs = 0;
  PlanFlags flags;
  std::string json;
  int64_t top = 1;
  std::string strategy = "planner";  // planner | data | hybrid (--network)
};

nlohmann::json plan_json(const std::string& name, const LayerPlan& p, int64_t redistribution_words,
                         double redistribution_time_s = 0) {
  nlohmann::json passes;
  for (const PassFigures& f : p.passes) {
    passes[std::string(pass_name(f.pass))] = {{"recv_words_max", f.volume.max_words},
                                              {"recv_words_mean", f.volume.mean_words},
                                              {"messages_max", f.volume.max_messages},
                                              {"lower_bound_words", f.lower_bound_words},
                                              {"memory_bytes", p.memory_bytes},
                                              {"time_s", f.time_s}};
  }
  return {{"name", name}, {"shape", p.shape.to_string()}, {"grid", p.grid.extents()}, {"panels", p.panels},
          {"redistribution_words", redistribution_words}, {"redistribution_time_s", redistribution_time_s},
          {"passes", passes}};
}

// "2,1,1,2,1", or "2,1,1,2,1 b=8" for the streamed algorithm in 8 panels.
std::string grid_label(const LayerPlan& p) {
  return p.panels == 0 ? p.grid.to_string() : fmt::format("{} b={}", p.grid.to_string(), p.panels);
}

// The widths of the layer and grid columns: wide enough for the longest layer name (an ONNX
// model's node names are long), which the grid column shows as "<- name" for a move.
struct Columns {
  size_t layer = 22, grid = 20;
};

Columns columns_for(const NetworkPlan& plan) {
  Columns c;
  for (const NetworkLayerPlan& l : plan.layers) {
    c.layer = std::max(c.layer, l.name.size() + 3);  // "name +" for a fallback layer
    c.grid = std::max(c.grid, l.name.size() + 4);
  }
  return c;
}

void print_plan_header(const Columns& c = {}) {
  fmt::print("{:<{}} {:<{}} {:<17} {:>12} {:>14} {:>12} {:>7} {:>11} {:>12} {:>11}\n", "layer", c.layer,
             "grid", c.grid, "pass", "words max", "words mean", "lower bound", "ratio*", "memory", "data-par",
             "time ms");
}

void print_plan(const std::string& name, const LayerPlan& p, const std::optional<LayerPlan>& dp,
                const Columns& c = {}) {
  // A pass's bound is its share of the step's, so the ratio is taken over the step so far
  // (words of this and the earlier passes over their bounds): for the first pass, its own.
  double words_so_far = 0, bound_so_far = 0;
  for (size_t i = 0; i < p.passes.size(); ++i) {
    const PassFigures& f = p.passes[i];
    words_so_far += static_cast<double>(f.volume.max_words);
    bound_so_far += f.lower_bound_words;
    const double ratio = bound_so_far > 0 ? words_so_far / bound_so_far : 0;
    fmt::print("{:<{}} {:<{}} {:<17} {:>12} {:>14.1f} {:>12.0f} {:>7} {:>11} {:>12} {:>11.3f}\n",
               i == 0 ? name : "", c.layer, i == 0 ? grid_label(p) : "", c.grid, pass_name(f.pass),
               f.volume.max_words, f.volume.mean_words, f.lower_bound_words,
               ratio > 0 ? fmt::format("{:.2f}", ratio) : "-",
               i == 0 ? format_bytes(p.memory_bytes) : "",
               dp ? fmt::format("{}", dp->passes[i].volume.max_words) : "n/a", f.time_s * 1e3);
  }
}

void print_edges(const NetworkLayerPlan& l, const Columns& c) {
  for (const EdgeFigures& e : l.edges_in) {
    if (e.words_max == 0) continue;  // the distributions agree: nothing moves, no all-to-all
    fmt::print("{:<{}} {:<{}} {:<17} {:>12} {:>14.1f} {:>12} {:>7} {:>11} {:>12} {:>11.3f}\n", "", c.layer,
               fmt::format("<- {}", e.from_layer), c.grid,
               !e.concat.empty() ? fmt::format("into {}", e.concat)
               : e.residual      ? "shortcut moved in"
               : e.gate          ? "gate moved in"
                                 : "input moved in",
               e.words_max, e.words_mean, "", "", "", 0, e.time_s * 1e3);
  }
}

void print_ratio_note(const PlanOptions& o) {
  if (o.passes.size() > 1) {
    fmt::print("* ratio of the words so far in the step to the bound so far: a later pass may reuse what an\n"
               "  earlier one gathered, so each pass's bound is its share of the step's (docs/planner.md)\n");
  }
}

void write_json(const std::string& path, const nlohmann::json& j) {
  std::ofstream f(path);
  f << j.dump(2) << "\n";
  if (!f) throw Error(fmt::format("--json {}: cannot write the file", path));
}

std::string limit_note(const PlanOptions& o) {
  return o.mem_per_rank_bytes ? "; memory limit " + format_bytes(*o.mem_per_rank_bytes) + " per rank" : "";
}

int run_layer_plan(const PlanCliOptions& c, const PlanOptions& o) {
  const ConvShape shape = ConvShape::parse(c.shape);
  const LayerPlan plan = plan_layer(shape, o);
  std::optional<LayerPlan> dp;
  if (o.procs <= shape.N) dp = evaluate_grid(shape, GridDims{o.procs, 1, 1, 1, 1}, o);
  fmt::print("convgrid plan  {}  on {} ranks; objective {}; profile {}{}\n", shape.to_string(),
             o.procs, c.flags.objective, o.profile.name, limit_note(o));
  print_plan_header();
  print_plan("layer", plan, dp);
  print_ratio_note(o);
  fmt::print("total words (busiest rank, summed over passes): {}; data parallelism: {}; modelled time {:.3f} ms\n",
             plan.words(), dp ? fmt::format("{}", dp->words()) : "n/a (P > N)", plan.time_s() * 1e3);
  if (plan.panels > 0) {
    fmt::print("streamed (SPEC section 5) in {} panels to fit the memory limit: nothing is kept between passes\n",
               plan.panels);
  }
  nlohmann::json top = nlohmann::json::array();
  if (c.top > 1) {
    fmt::print("the {} best grids by the objective:\n{:>4} {:<20} {:>8} {:>14} {:>12}\n", c.top, "rank", "grid",
               "panels", "words", "time ms");
    int rank = 0;
    for (const LayerPlan& p : best_layer_plans(shape, o, static_cast<size_t>(c.top))) {
      fmt::print("{:>4} {:<20} {:>8} {:>14} {:>12.3f}\n", ++rank, p.grid.to_string(), p.panels, p.words(),
                 p.time_s() * 1e3);
      top.push_back({{"grid", p.grid.extents()}, {"panels", p.panels}, {"words", p.words()}, {"time_s", p.time_s()}});
    }
  }
  if (!c.json.empty()) {
    write_json(c.json, {{"procs", o.procs}, {"objective", c.flags.objective}, {"profile", o.profile.name},
                        {"top", top},
                        {"layers", nlohmann::json::array({plan_json("layer", plan, 0)})},
                        {"totals", {{"recv_words_max", plan.words()}, {"layer_words", plan.words()},
                                    {"redistribution_words", 0},
                                    {"lower_bound_words", [&] {
                                       double b = 0;
                                       for (const PassFigures& f : plan.passes) b += f.lower_bound_words;
                                       return b;
                                     }()},
                                    {"data_parallel_words", dp ? nlohmann::json(dp->words()) : nlohmann::json()},
                                    {"time_s", plan.time_s()}, {"memory_bytes", plan.memory_bytes}}}});
  }
  return 0;
}

// Whether the plans are of the training passes of a network convgrid train runs.
bool for_training(const Network& net, const PlanOptions& o) {
  if (o.passes.size() != 3) return false;
  try {
    check_trainable(net);
  } catch (const InputError&) {
    return false;
  }
  return true;
}

int run_network_plan(const PlanCliOptions& c, const PlanOptions& o) {
  const Network net = load_network(c.network, c.input_shape);
  NetworkPlanOptions no;
  no.layer = o;
  no.batch = c.batch;
  no.family = family_of(c.strategy);
  // For a network train runs, the plan of the training job (train/training_job.hpp, as convgrid
  // train plans it): the limit bounds the whole job; elsewhere each layer's plan.
  const bool training = for_training(net, o);
  const bool job_limit = training && o.mem_per_rank_bytes;
  std::optional<TrainingJobPlan> job;
  if (training) job = plan_training_job(net, JobPlanOptions{no, "", false});
  const NetworkPlan plan = job ? job->plan : plan_network(net, no);
  fmt::print("convgrid plan  network {} at batch {} on {} ranks; {}objective {}; profile {}{}{}\n", net.name(),
             c.batch, o.procs, no.family == GridFamily::any ? "" : fmt::format("grids {}; ", to_string(no.family)),
             c.flags.objective, o.profile.name, limit_note(o),
             job_limit ? " for the whole training job (as convgrid train)" : "");
  const Columns columns = columns_for(plan);
  print_plan_header(columns);
  nlohmann::json layers = nlohmann::json::array();
  std::vector<std::string> fallbacks;
  for (const NetworkLayerPlan& l : plan.layers) {
    print_plan(l.fallback ? l.name + " +" : l.name, l.plan, l.data_parallel, columns);
    print_edges(l, columns);
    layers.push_back(plan_json(l.name, l.plan, l.redistribution_words(), l.redistribution_time_s()));
    layers.back()["norm_words"] = l.norm_words;
    layers.back()["fallback"] = l.fallback;
    if (l.fallback) fallbacks.push_back(l.name);
  }
  print_ratio_note(o);
  if (!fallbacks.empty()) {
    fmt::print("+ no {} grid of {} ranks fits {} layer{} ({}): planned over every grid\n", to_string(no.family),
               o.procs, fallbacks.size(), fallbacks.size() == 1 ? "" : "s", fmt::join(fallbacks, ", "));
  }
  const std::optional<int64_t> dp = plan.data_parallel_words();
  fmt::print("\ntotals (busiest rank's words, summed over layers, passes and moves):\n");
  fmt::print("  layers {}  + redistribution {}{}  = {} words; lower bound {:.0f} (ratio {:.2f})\n",
             plan.layer_words(), plan.redistribution_words(),
             plan.norm_words() > 0 ? fmt::format("  + batch norm {}", plan.norm_words()) : "", plan.words(),
             plan.lower_bound_words(),
             plan.lower_bound_words() > 0 ? plan.words() / plan.lower_bound_words() : 0.0);
  fmt::print("  data parallelism: {}\n",
             dp ? fmt::format("{} words ({:.2f}x the plan)", *dp, static_cast<double>(*dp) / plan.words())
                : std::string("n/a (P > N)"));
  fmt::print("  modelled time {:.3f} ms; largest layer memory {}\n", plan.time_s() * 1e3,
             format_bytes(plan.memory_bytes()));
  const StepCollectives& rest = plan.collectives;
  if (rest.words() > 0) {
    fmt::print("  the whole training step: {} words, {:.3f} ms, with the loss's all-reduces ({} words, {:.3f} ms) "
               "and the biases' ({} words, {:.3f} ms)\n",
               plan.step_words(), plan.step_time_s() * 1e3, rest.loss_words, rest.loss_time_s * 1e3, rest.bias_words,
               rest.bias_time_s * 1e3);
  }
  // What convgrid train would hold with these plans: every layer's buffers, the activations in
  // the step's arena (each buffer's bytes reused once its life ends), parameters and momentum
  // (train/training_memory.hpp).
  const int64_t job_bytes = job ? job->busiest.total() : -1;  // -1: none
  if (job_bytes >= 0) {
    fmt::print("  training job per rank (convgrid train on these plans, its peak): {}\n",
               format_bytes(job_bytes));
  }
  if (!c.json.empty()) {
    write_json(c.json, {{"network", net.name()}, {"batch", c.batch}, {"procs", o.procs}, {"plan", c.strategy},
                        {"objective", c.flags.objective}, {"profile", o.profile.name}, {"layers", layers},
                        {"totals", {{"recv_words_max", plan.words()}, {"layer_words", plan.layer_words()},
                                    {"redistribution_words", plan.redistribution_words()},
                                    {"norm_words", plan.norm_words()},
                                    {"lower_bound_words", plan.lower_bound_words()},
                                    {"data_parallel_words", dp ? nlohmann::json(*dp) : nlohmann::json()},
                                    {"time_s", plan.time_s()}, {"memory_bytes", plan.memory_bytes()},
                                    {"training_job_bytes", job_bytes >= 0 ? nlohmann::json(job_bytes) : nlohmann::json()},
                                    {"loss_words", rest.loss_words}, {"loss_time_s", rest.loss_time_s},
                                    {"bias_words", rest.bias_words}, {"bias_time_s", rest.bias_time_s},
                                    {"step_words", plan.step_words()}, {"step_time_s", plan.step_time_s()}}}});
  }
  return 0;
}

int run_plan(const PlanCliOptions& c) {
  const PlanOptions o = plan_options(c.flags, c.procs);
  if (c.shape.empty() == c.network.empty()) throw InputError("plan needs one of --shape or --network");
  if (c.batch < 1) throw InputError(fmt::format("--batch {} must be at least 1", c.batch));
  return c.network.empty() ? run_layer_plan(c, o) : run_network_plan(c, o);
}

}  // namespace

void add_plan_command(CLI::App& app, Registry& registry) {
  auto c = std::make_shared<PlanCliOptions>();
  CLI::App* sub = app.add_subcommand("plan", "Choose the grid with the fewest words (or least time) for a layer or a network");
  CLI::Option* shape = sub->add_option("--shape", c->shape, "The layer, in the --shape syntax of conv");
  CLI::Option* network = sub->add_option("--network", c->network, "A built-in network (resnet50, vgg16, fmnist), a JSON file or an ONNX model (.onnx)")
      ->excludes(shape);
  add_input_shape_flag(sub, c->input_shape);
  sub->add_option("--batch", c->batch, "Batch size N of the network (default 256)")->needs(network);
  shape->excludes(network);
  sub->add_option("--procs", c->procs, "Number of ranks P")->required();
  sub->add_option("--mem-per-rank", c->flags.mem_per_rank, "Per-rank memory limit: BYTES or e.g. 512MiB, 2GiB");
  sub->add_option("--passes", c->flags.passes, "fwd, or train (forward and both backward passes)")
      ->check(CLI::IsMember({"fwd", "train"}));
  sub->add_option("--objective", c->flags.objective, "volume (words) or time (modelled)")
      ->check(CLI::IsMember({"volume", "time"}));
  sub->add_option("--profile", c->flags.profile, "Machine profile: a built-in name or a JSON file");
  sub->add_option("--json", c->json, "Write the plan as JSON");
  sub->add_option("--plan", c->strategy,
                  "With --network: planner (every grid), data (data parallelism), hybrid (best batch x spatial) or channel (channel x filter)")
      ->needs(network);
  sub->add_option("--top", c->top, "With --shape: also list the K best grids by the objective (JSON: top)")
      ->check(CLI::Range(int64_t{1}, int64_t{100}))
      ->needs(shape);
  registry.emplace_back(sub, [c] { return run_plan(*c); });
}

}  // namespace convgrid::cli
