// convgrid plan: the communication-optimal grid for a layer, with the busiest rank's and the
// mean words per pass next to the lower bound, memory, modelled time, and what data parallelism
// would receive instead. --json writes layers[] and totals.
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "convgrid/error.hpp"
#include "plan/layer_planner.hpp"

namespace convgrid::cli {
namespace {

struct PlanCliOptions {
  std::string shape;
  int64_t procs = 0;
  std::string mem_per_rank;
  std::string passes = "fwd";
  std::string objective = "volume";
  std::string profile = "ib100-cpu";
  std::string json;
};

PlanOptions to_plan_options(const PlanCliOptions& c) {
  PlanOptions o;
  o.procs = c.procs;
  if (c.passes == "train") o.passes = {Pass::forward, Pass::backward_data, Pass::backward_weights};
  o.objective = c.objective == "time" ? Objective::time : Objective::volume;
  o.profile = load_profile(c.profile);
  if (!c.mem_per_rank.empty()) o.mem_per_rank_bytes = parse_bytes(c.mem_per_rank);
  return o;
}

nlohmann::json plan_json(const std::string& name, const LayerPlan& p) {
  nlohmann::json passes;
  for (const PassFigures& f : p.passes) {
    passes[std::string(pass_name(f.pass))] = {{"recv_words_max", f.volume.max_words},
                                              {"recv_words_mean", f.volume.mean_words},
                                              {"messages_max", f.volume.max_messages},
                                              {"lower_bound_words", f.lower_bound_words},
                                              {"memory_bytes", p.memory_bytes},
                                              {"time_s", f.time_s}};
  }
  return {{"name", name}, {"shape", p.shape.to_string()}, {"grid", p.grid.extents()},
          {"redistribution_words", 0}, {"passes", passes}};
}

void print_plan(const std::string& name, const LayerPlan& p, const std::optional<LayerPlan>& dp) {
  fmt::print("{:<14} {:<16} {:<17} {:>12} {:>14} {:>12} {:>7} {:>11} {:>12} {:>11}\n", "layer", "grid",
             "pass", "words max", "words mean", "lower bound", "ratio", "memory", "data-par", "time ms");
  for (size_t i = 0; i < p.passes.size(); ++i) {
    const PassFigures& f = p.passes[i];
    const double ratio = f.lower_bound_words > 0 ? f.volume.max_words / f.lower_bound_words : 0;
    fmt::print("{:<14} {:<16} {:<17} {:>12} {:>14.1f} {:>12.0f} {:>7} {:>11} {:>12} {:>11.3f}\n",
               i == 0 ? name : "", i == 0 ? p.grid.to_string() : "", pass_name(f.pass),
               f.volume.max_words, f.volume.mean_words, f.lower_bound_words,
               ratio > 0 ? fmt::format("{:.2f}", ratio) : "-",
               i == 0 ? format_bytes(p.memory_bytes) : "",
               dp ? fmt::format("{}", dp->passes[i].volume.max_words) : "n/a", f.time_s * 1e3);
  }
}

int run_plan(const PlanCliOptions& c) {
  const ConvShape shape = ConvShape::parse(c.shape);
  const PlanOptions o = to_plan_options(c);
  const LayerPlan plan = plan_layer(shape, o);
  std::optional<LayerPlan> dp;
  if (o.procs <= shape.N) dp = evaluate_grid(shape, GridDims{o.procs, 1, 1, 1, 1}, o);
  fmt::print("convgrid plan  {}  on {} ranks; objective {}; profile {}{}\n", shape.to_string(),
             o.procs, c.objective, o.profile.name,
             o.mem_per_rank_bytes ? "; memory limit " + format_bytes(*o.mem_per_rank_bytes) + " per rank" : "");
  print_plan("layer", plan, dp);
  fmt::print("total words (busiest rank, summed over passes): {}; data parallelism: {}; modelled time {:.3f} ms\n",
             plan.words(), dp ? fmt::format("{}", dp->words()) : "n/a (P > N)", plan.time_s() * 1e3);
  if (!c.json.empty()) {
    nlohmann::json j{{"procs", o.procs}, {"objective", c.objective}, {"profile", o.profile.name},
                     {"layers", nlohmann::json::array({plan_json("layer", plan)})},
                     {"totals", {{"recv_words_max", plan.words()}, {"time_s", plan.time_s()},
                                 {"memory_bytes", plan.memory_bytes}}}};
    std::ofstream f(c.json);
    f << j.dump(2) << "\n";
    if (!f) throw Error(fmt::format("--json {}: cannot write the file", c.json));
  }
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app, Registry& registry) {
  auto c = std::make_shared<PlanCliOptions>();
  CLI::App* sub = app.add_subcommand("plan", "Choose the grid with the fewest words (or least time) for a layer");
  sub->add_option("--shape", c->shape, "The layer, in the --shape syntax of conv")->required();
  sub->add_option("--procs", c->procs, "Number of ranks P")->required();
  sub->add_option("--mem-per-rank", c->mem_per_rank, "Per-rank memory limit: BYTES or e.g. 512MiB, 2GiB");
  sub->add_option("--passes", c->passes, "fwd, or train (forward and both backward passes)")
      ->check(CLI::IsMember({"fwd", "train"}));
  sub->add_option("--objective", c->objective, "volume (words) or time (modelled)")
      ->check(CLI::IsMember({"volume", "time"}));
  sub->add_option("--profile", c->profile, "Machine profile: a built-in name or a JSON file");
  sub->add_option("--json", c->json, "Write the plan as JSON");
  registry.emplace_back(sub, [c] { return run_plan(*c); });
}

}  // namespace convgrid::cli
