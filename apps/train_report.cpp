// Printing and logging a training job's report.
#include "train_report.hpp"

#include <fmt/format.h>

#include <fstream>
#include <map>

#include "convgrid/error.hpp"
#include "plan/layer_planner.hpp"

namespace convgrid::cli {
namespace {

std::string plan_text(const LayerPlan& p) {
  return p.algorithm == ConvAlgorithm::streamed ? fmt::format("streamed, {} panels", p.panels)
                                                : std::string(to_string(p.algorithm));
}

}  // namespace

void print_job_start(const TrainJobReport& r, bool reproducible) {
  fmt::print("convgrid train: {} on {} ranks, batch {}, {} training and {} test samples{}\n",
             r.network, r.procs, r.batch, r.train_count, r.test_count,
             reproducible ? ", reproducible arithmetic" : "");
  fmt::print("{}\n", threads_text(r.threads));
  fmt::print("{:<24} {:<16} {:>8} {:>18}  {}\n", "layer", "grid", "panels", "moved in (words)",
             "algorithm");
  const NetworkPlan& plan = r.plan.plan;
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const LayerPlan& p = r.plan.plans[i];
    fmt::print("{:<24} {:<16} {:>8} {:>18}  {}\n", plan.layers[i].name, p.grid.to_string(),
               p.panels, plan.layers[i].redistribution_words(), plan_text(p));
  }
  std::fflush(stdout);
}

void print_job_end(const TrainJobReport& r, const std::string& mem_per_rank, bool planner_words) {
  if (!r.nodes.empty()) {
    // Each layer's own work by kind; the moves of activations between spreads (into compute
    // layers and residual adds, which the planner counts) and pooling's halos apart.
    std::map<std::string, int64_t> own;
    int64_t moves = 0, moves_model = 0, halos = 0, halos_model = 0;
    bool equal = true;
    for (const NodeStepReport& n : r.nodes) {
      own[n.kind] += n.measured.total();
      const bool pool = n.kind.find("pool") != std::string::npos;
      (pool ? halos : moves) += n.measured_edge.total();
      (pool ? halos_model : moves_model) += n.modelled_edge.total();
      equal = equal && n.equal_on_every_rank;
    }
    std::string kinds;
    for (const auto& [kind, words] : own) {
      const bool norm = kind == "batch_norm" && planner_words;
      if (words > 0) {
        kinds += fmt::format("{} {}{} | ", kind, words,
                             norm ? fmt::format(" (planner {})", r.plan.plan.norm_words()) : "");
      }
    }
    fmt::print(
        "words received per step (busiest rank per layer): {}redistribution {} (model {}{}) | "
        "pooling halos {} "
        "(model {}); every layer {} its model on every rank\n",
        kinds, moves, moves_model,
        planner_words ? fmt::format(", planner {}", r.plan.plan.redistribution_words()) : "", halos,
        halos_model, equal ? "equal to" : "DIFFERENT FROM");
    // Where the last step's time went, by kind of node (mean over ranks, inputs' moves included).
    std::map<std::string, double> time;
    double total = 0;
    for (const NodeStepReport& n : r.nodes) {
      const double t = n.seconds_mean.forward + n.seconds_mean.backward;
      time[n.kind] += t;
      total += t;
    }
    std::string parts;
    for (const auto& [kind, t] : time) parts += fmt::format("{} {:.3f} | ", kind, t * 1e3);
    fmt::print("time of the last training step by node kind (ms, mean over ranks, moves into a node its "
               "own): {}all {:.3f}\n",
               parts, total * 1e3);
  }
  const TrainingMemory& m = r.plan.busiest;
  fmt::print(
      "memory per rank (busiest): tracked peak {}, model {} (activations {}, parameters and "
      "momentum {}, "
      "exchanges {}, layers {}){}; unconstrained plans {}; data set slice {} on top\n",
      format_bytes(r.peak_bytes), format_bytes(m.total()), format_bytes(m.activations),
      format_bytes(m.parameters), format_bytes(m.exchanges), format_bytes(m.layers),
      mem_per_rank.empty() ? "" : fmt::format("; limit {}", mem_per_rank),
      format_bytes(r.plan.unconstrained.total()), format_bytes(r.data_bytes));
  if (!r.last_checkpoint.empty()) fmt::print("checkpoint {}\n", r.last_checkpoint);
}

void write_job_json(const std::string& path, const TrainJobReport& r, nlohmann::json j,
                    bool log_steps) {
  const auto words = [](const LayerWords& w) {
    return nlohmann::json{{"forward", w.forward}, {"backward", w.backward}};
  };
  const auto seconds = [](const DistNet::NodeSeconds& s) {
    return nlohmann::json{{"forward", s.forward}, {"backward", s.backward}};
  };
  nlohmann::json layers = nlohmann::json::array();
  const NetworkPlan& plan = r.plan.plan;
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const LayerPlan& p = r.plan.plans[i];
    layers.push_back({{"name", plan.layers[i].name},
                      {"grid", p.grid.extents()},
                      {"panels", p.panels},
                      {"algorithm", to_string(p.algorithm)},
                      {"redistribution_words_planned", plan.layers[i].redistribution_words()}});
  }
  nlohmann::json nodes = nlohmann::json::array();
  int64_t measured = 0, modelled = 0;
  for (const NodeStepReport& n : r.nodes) {
    nodes.push_back({{"name", n.name},
                     {"kind", n.kind},
                     {"measured", words(n.measured)},
                     {"modelled", words(n.modelled)},
                     {"measured_moves", words(n.measured_edge)},
                     {"modelled_moves", words(n.modelled_edge)},
                     {"equal_on_every_rank", n.equal_on_every_rank},
                     {"seconds", {{"max", seconds(n.seconds_max)}, {"mean", seconds(n.seconds_mean)}}}});
    measured += n.measured.total() + n.measured_edge.total();
    modelled += n.modelled.total() + n.modelled_edge.total();
  }
  const TrainingMemory& m = r.plan.busiest;
  j.update({{"network", r.network},
            {"procs", r.procs},
            {"batch", r.batch},
            {"kernel_threads", r.threads.threads},
            {"train_samples", r.train_count},
            {"test_samples", r.test_count},
            {"layers", layers},
            {"nodes", nodes},
            {"words_per_step", {{"measured", measured}, {"modelled", modelled}}},
            {"planned",
             {{"redistribution_words", plan.redistribution_words()},
              {"norm_words", plan.norm_words()},
              {"layer_words", plan.layer_words()}}},
            {"peak_bytes_per_rank", r.peak_bytes},
            {"peak_bytes_by_rank", r.tracked_bytes_by_rank},
            {"modelled_bytes_by_rank", r.modelled_bytes_by_rank},
            {"modelled_bytes",
             {{"activations", m.activations},
              {"parameters", m.parameters},
              {"exchanges", m.exchanges},
              {"layers", m.layers},
              {"total", m.total()}}},
            {"unconstrained_modelled_bytes", r.plan.unconstrained.total()},
            {"largest_layer_plan_bytes", plan.memory_bytes()},
            {"data_set_bytes_per_rank", r.data_bytes}});
  j["epochs"] = nlohmann::json::array();
  for (const EpochRecord& e : r.epochs) {
    j["epochs"].push_back({{"epoch", e.epoch},
                           {"train_loss", e.train_loss},
                           {"train_accuracy", e.train_accuracy},
                           {"test_loss", e.test_loss},
                           {"test_accuracy", e.test_accuracy},
                           {"samples_per_s", e.samples_per_s},
                           {"seconds", e.seconds},
                           {"lr", e.lr}});
  }
  if (log_steps) {
    j["steps"] = nlohmann::json::array();
    for (const StepRecord& s : r.steps)
      j["steps"].push_back({{"step", s.step}, {"loss", s.loss}, {"seconds", s.seconds}});
  }
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  if (!out) throw InputError(fmt::format("--json {}: cannot write", path));
}

}  // namespace convgrid::cli
