// convgrid train: distributed training on Fashion-MNIST (SPEC section 8). The planner chooses a
// grid for every layer at the job's rank count and batch (train passes, optional memory limit);
// DistNet runs them with redistributions between layers; Trainer runs SGD epochs with a test
// evaluation after each, checkpoints and resume. Rank 0 prints the plan, the progress and the
// per-step words measured against the planner's; --json writes the run's log.
#include <mpi.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "comm/collectives.hpp"
#include "commands.hpp"
#include "convgrid/error.hpp"
#include "convgrid/local_conv.hpp"
#include "convgrid/memory.hpp"
#include "io/idx.hpp"
#include "nn/network_json.hpp"
#include "plan/network_planner.hpp"
#include "plan_flags.hpp"
#include "train/trainer.hpp"
#include "train/training_plan.hpp"
#include "train_progress.hpp"

namespace convgrid::cli {
namespace {

struct TrainCliOptions {
  std::string network = "fmnist";
  int64_t epochs = 1;
  int64_t batch = 64;
  float lr = 0.02f, momentum = 0.9f, weight_decay = 5e-4f;
  uint64_t seed = 1;
  std::string mem_per_rank;
  bool reproducible = false;
  std::string family = "any";
  std::string grid;               // one grid for every layer it fits
  std::string progress = "auto";  // auto | bar | lines | none
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  bool resume = false;
  std::string json;
  std::string data_dir = FashionMnist{}.dir;
  int64_t train_samples = 0, test_samples = 0;  // 0: all
  int threads = 0;
  int64_t progress_every = 100;
  bool log_steps = false;
  std::string kill_at;  // "R:S", testing only
};

GridFamily parse_family(const std::string& s) {
  if (s == "any") return GridFamily::any;
  for (GridFamily f : {GridFamily::data_parallel, GridFamily::batch_spatial, GridFamily::channel_filter}) {
    if (s == to_string(f)) return f;
  }
  throw InputError(fmt::format("--family {}: expected any, data_parallel, batch_spatial or channel_filter", s));
}

// x of every rank, on rank 0 (empty elsewhere).
std::vector<int64_t> gather_to_root(const Communicator& world, int64_t x) {
  std::vector<int64_t> all(world.rank() == 0 ? world.size() : 0);
  MPI_Gather(&x, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, 0, world.raw());
  return all;
}

// Largest value of x over all ranks.
int64_t max_over_ranks(const Communicator& world, int64_t x) {
  int64_t out = x;
  MPI_Allreduce(&x, &out, 1, MPI_INT64_T, MPI_MAX, world.raw());
  return out;
}

int run_train(const TrainCliOptions& o) {
  const Communicator world = Communicator::world();
  const bool root = world.rank() == 0;
  if (o.epochs < 1) throw InputError(fmt::format("--epochs {}: must be at least 1", o.epochs));
  if (o.batch < 1) throw InputError(fmt::format("--batch {}: must be at least 1", o.batch));
  if (o.threads > 0) set_kernel_threads(o.threads);
  TrainOptions topt;
  topt.epochs = o.epochs;
  topt.sgd = SgdOptions{o.lr, o.momentum, o.weight_decay};
  topt.checkpoint_dir = o.checkpoint_dir;
  topt.checkpoint_every = o.checkpoint_every;
  topt.resume = o.resume;
  if (o.resume && o.checkpoint_dir.empty()) throw InputError("--resume needs --checkpoint-dir");
  if (!o.kill_at.empty()) {
    if (std::sscanf(o.kill_at.c_str(), "%d:%ld", &topt.kill_rank, &topt.kill_step) != 2) {
      throw InputError(fmt::format("--kill-at {}: expected RANK:STEP", o.kill_at));
    }
  }

  const Network net = load_network(o.network);
  const FashionMnist data{o.data_dir};
  const IdxHeader images = read_idx_header(data.train_images());
  const Activation& in = net.input();
  if (images.dims.size() != 3 || in.C != 1 || in.H != images.dims[1] || in.W != images.dims[2]) {
    throw InputError(fmt::format("network '{}' takes {} inputs; the images of {} are 1x{}x{}", net.name(),
                                 in.to_string(), data.train_images(), images.dims.size() > 1 ? images.dims[1] : 0,
                                 images.dims.size() > 2 ? images.dims[2] : 0));
  }
  NetworkPlanOptions popt;
  popt.layer = plan_options(PlanFlags{"train", "volume", "ib100-cpu", o.mem_per_rank}, world.size());
  popt.batch = o.batch;
  popt.family = parse_family(o.family);
  if (o.reproducible) {
    if (!o.mem_per_rank.empty()) throw InputError("--reproducible runs without --mem-per-rank (it does not stream)");
    if (o.family != "any" && o.family != "data_parallel") {
      throw InputError(fmt::format("--reproducible runs data-parallel grids; --family {} asks for others", o.family));
    }
    popt.family = GridFamily::data_parallel;
  }
  // With --grid the limit is met on the given grids (below), not by the planner's search.
  NetworkPlanOptions search = popt;
  if (!o.grid.empty()) search.layer.mem_per_rank_bytes.reset();
  const TrainingPlan planned = plan_training(net, search);
  const NetworkPlan& plan = planned.plan;
  std::vector<LayerPlan> plans = plan.layer_plans();
  if (!o.grid.empty()) {  // the same grid wherever it fits, the planner's elsewhere
    const GridDims g = GridDims::parse(o.grid);
    if (g.size() != world.size()) {
      throw InputError(fmt::format("--grid {} has {} ranks but the job has {}", o.grid, g.size(), world.size()));
    }
    for (LayerPlan& p : plans) {
      if (g.fits(p.shape)) p = evaluate_grid(p.shape, g, popt.layer);
    }
    if (!o.reproducible) {  // under --mem-per-rank, layers stream on their grids until the job fits
      try {
        plans = fit_training_on_grids(net, plans, popt);
      } catch (const InputError& e) {
        throw InputError(fmt::format("--grid {}: {}", o.grid, e.what()));
      }
    }
  }

  // The job's memory on this rank for the plans it runs.
  std::optional<TrainingMemory> modelled;
  TrainingMemory busiest_model;
  if (!o.reproducible) {
    modelled = training_memory(net, plans, o.batch, world.size(), world.rank());
    busiest_model = o.grid.empty() ? planned.memory : busiest_training_memory(net, plans, o.batch, world.size());
  }

  const int64_t train_count = o.train_samples > 0 ? o.train_samples : data.train_count();
  const int64_t test_count = o.test_samples > 0 ? o.test_samples : data.test_count();
  BatchSource train(data.train_images(), data.train_labels(), train_count, o.batch, o.seed, true);
  BatchSource test(data.test_images(), data.test_labels(), test_count, o.batch, o.seed, false);

  DistNet dnet(net, plans, o.batch, world, o.seed, Backend::onednn,
               o.reproducible ? Arithmetic::reproducible : Arithmetic::fast);
  if (root) {
    fmt::print("convgrid train: {} on {} ranks, batch {}, {} training and {} test samples, seed {}{}\n",
               net.name(), world.size(), o.batch, train_count, test_count, o.seed,
               o.reproducible ? ", reproducible arithmetic" : "");
    fmt::print("{:<10} {:<16} {:>8} {:>16}\n", "layer", "grid", "panels", "moved in (words)");
    for (const NetworkLayerPlan& l : plan.layers) {
      const size_t i = &l - plan.layers.data();
      const auto& m = dnet.modelled_edge_words()[i];
      fmt::print("{:<10} {:<16} {:>8} {:>16}\n", l.name, plans[i].grid.to_string(), plans[i].panels,
                 m.forward + m.backward);
    }
    std::fflush(stdout);
  }

  TrainState initial;
  initial.network = net.name();
  initial.batch = o.batch;
  initial.seed = o.seed;
  Trainer trainer(world, dnet, train, test, initial, topt);
  if (o.progress != "auto" && o.progress != "bar" && o.progress != "lines" && o.progress != "none") {
    throw InputError(fmt::format("--progress {}: expected auto, bar, lines or none", o.progress));
  }
  // Under mpirun rank 0's output is a pseudo-terminal whatever mpirun's own is: auto draws the
  // bar only outside mpirun.
  const bool bar = o.progress == "bar" || (o.progress == "auto" && std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr &&
                                           isatty(STDOUT_FILENO) != 0);
  TrainProgress progress(root && o.progress != "none", bar, o.epochs, o.progress_every);
  std::vector<DistNet::EdgeWords> edges;
  // Words of the last training step by kind (conv, redistribution, pooling, reductions): the
  // counters are read and restarted after every step and after every test evaluation.
  NetTraffic& counters = dnet.traffic();
  TrafficCounter* kinds[4] = {&counters.conv, &counters.redistribution, &counters.pooling, &counters.reductions};
  int64_t step_words[4] = {};
  const auto restart = [&] {
    for (TrafficCounter* c : kinds) c->reset();
  };
  TrainObserver observer;
  observer.note = [&](const std::string& s) {
    if (root) fmt::print("{}\n", s);
  };
  observer.step = [&](int64_t epoch, int64_t batch, int64_t batches, double loss, double rate) {
    edges = dnet.edge_words();
    for (int i = 0; i < 4; ++i) step_words[i] = kinds[i]->traffic().words();
    restart();
    progress.step(epoch, batch, batches, loss, rate, o.batch);
  };
  std::vector<EpochRecord> records;
  observer.epoch = [&](const EpochRecord& r) {
    progress.end_line();
    if (root) {
      fmt::print("epoch {}: train loss {:.4f} accuracy {:.4f} | test loss {:.4f} accuracy {:.4f} | {:.0f} "
                 "samples/s ({:.1f} s)\n",
                 r.epoch, r.train_loss, r.train_accuracy, r.test_loss, r.test_accuracy,
                 r.samples_per_s, r.seconds);
      std::fflush(stdout);
    }
    restart();  // the test evaluation's traffic is not a training step's
  };
  records = trainer.run(observer);

  // Words of the last training step on the busiest rank, against the planner's redistribution.
  int64_t measured_redistribution = 0, modelled_redistribution = 0, planned_redistribution = 0;
  nlohmann::json layers = nlohmann::json::array();
  for (size_t i = 0; i < plan.layers.size(); ++i) {
    const int64_t fwd = max_over_ranks(world, i < edges.size() ? edges[i].forward : 0);
    const int64_t bwd = max_over_ranks(world, i < edges.size() ? edges[i].backward : 0);
    const DistNet::EdgeWords model = dnet.modelled_edge_words()[i];
    measured_redistribution += fwd + bwd;
    modelled_redistribution += model.forward + model.backward;
    planned_redistribution += plan.layers[i].redistribution_words();
    layers.push_back({{"name", plan.layers[i].name}, {"grid", plan.layers[i].plan.grid.extents()},
                      {"panels", plan.layers[i].plan.panels},
                      {"redistribution_words_planned", plan.layers[i].redistribution_words()},
                      {"redistribution_words_modelled", model.forward + model.backward},
                      {"redistribution_words_measured", fwd + bwd}});
  }
  const char* names[4] = {"conv", "redistribution", "pooling", "reductions"};
  nlohmann::json traffic;
  int64_t busiest[4];
  for (int i = 0; i < 4; ++i) {
    busiest[i] = max_over_ranks(world, step_words[i]);
    traffic[names[i]] = busiest[i];
  }
  if (root && !records.empty()) {
    fmt::print("words received per step (busiest rank): conv {} | redistribution {} (model {}{}) | "
               "pooling halos {} | reductions {}\n",
               busiest[0], measured_redistribution, modelled_redistribution,
               o.grid.empty() ? fmt::format(", planner {}", planned_redistribution) : "", busiest[2], busiest[3]);
  }
  // The whole job's tracked memory (every Buffer and TrackedVector: activations and their
  // gradients, weights, momentum, each layer's kept working buffers and engine copies) on every
  // rank, against the model of the plans run (train/training_memory.hpp; fast arithmetic only).
  const int64_t tracked = MemoryTracker::peak_bytes();
  const std::vector<int64_t> tracked_by_rank = gather_to_root(world, tracked);
  const std::vector<int64_t> modelled_by_rank = gather_to_root(world, modelled ? modelled->total() : 0);
  const int64_t peak_bytes = max_over_ranks(world, tracked);
  const int64_t data_bytes = max_over_ranks(world, std::max(train.image_bytes(), test.image_bytes()));
  if (root) {
    std::string model_text;
    if (modelled) {
      model_text = fmt::format(", model {} (activations {}, parameters and momentum {}, exchanges {}, layers {}){}; "
                               "unconstrained plans {}",
                               format_bytes(busiest_model.total()), format_bytes(busiest_model.activations),
                               format_bytes(busiest_model.parameters), format_bytes(busiest_model.exchanges),
                               format_bytes(busiest_model.layers),
                               o.mem_per_rank.empty() ? "" : fmt::format("; limit {}", o.mem_per_rank),
                               format_bytes(planned.unconstrained.total()));
    }
    fmt::print("memory per rank (busiest): tracked peak {}{}; data set slice {} on top\n", format_bytes(peak_bytes),
               model_text, format_bytes(data_bytes));
  }
  if (root && !trainer.last_checkpoint().empty()) fmt::print("checkpoint {}\n", trainer.last_checkpoint());
  if (root && !o.json.empty()) {
    nlohmann::json j = {{"network", net.name()}, {"procs", world.size()}, {"batch", o.batch},
                        {"seed", o.seed}, {"lr", o.lr}, {"momentum", o.momentum},
                        {"weight_decay", o.weight_decay},
                        {"arithmetic", o.reproducible ? "reproducible" : "fast"}, {"train_samples", train_count},
                        {"test_samples", test_count}, {"layers", layers},
                        {"words_per_step", traffic}, {"peak_bytes_per_rank", peak_bytes},
                        {"peak_bytes_by_rank", tracked_by_rank},
                        {"largest_layer_plan_bytes", plan.memory_bytes()},
                        {"data_set_bytes_per_rank", data_bytes}};
    if (popt.layer.mem_per_rank_bytes) j["mem_per_rank_bytes"] = *popt.layer.mem_per_rank_bytes;
    if (modelled) {
      j["unconstrained_modelled_bytes"] = planned.unconstrained.total();
      j["modelled_bytes_by_rank"] = modelled_by_rank;
      j["modelled_bytes"] = {{"activations", busiest_model.activations},
                             {"parameters", busiest_model.parameters},
                             {"exchanges", busiest_model.exchanges},
                             {"layers", busiest_model.layers},
                             {"total", busiest_model.total()}};
    }
    j["epochs"] = nlohmann::json::array();
    for (const EpochRecord& r : records) {
      j["epochs"].push_back({{"epoch", r.epoch}, {"train_loss", r.train_loss},
                             {"train_accuracy", r.train_accuracy}, {"test_loss", r.test_loss},
                             {"test_accuracy", r.test_accuracy}, {"samples_per_s", r.samples_per_s},
                             {"seconds", r.seconds}});
    }
    if (o.log_steps) {
      j["steps"] = nlohmann::json::array();
      for (const StepRecord& s : trainer.steps()) j["steps"].push_back({{"step", s.step}, {"loss", s.loss}});
    }
    std::ofstream out(o.json);
    out << j.dump(2) << "\n";
    if (!out) throw InputError(fmt::format("--json {}: cannot write", o.json));
  }
  return 0;
}

}  // namespace

void add_train_command(CLI::App& app, Registry& registry) {
  auto o = std::make_shared<TrainCliOptions>();
  CLI::App* sub = app.add_subcommand("train", "train a network on Fashion-MNIST over MPI (run under mpirun)");
  sub->add_option("--network", o->network, "built-in network (fmnist) or a JSON network file")->capture_default_str();
  sub->add_option("--epochs", o->epochs, "epochs to train")->capture_default_str();
  sub->add_option("--batch", o->batch, "global batch size")->capture_default_str();
  sub->add_option("--lr", o->lr, "learning rate")->capture_default_str();
  sub->add_option("--momentum", o->momentum, "SGD momentum")->capture_default_str();
  sub->add_option("--weight-decay", o->weight_decay, "L2 weight decay")->capture_default_str();
  sub->add_option("--seed", o->seed, "seed of the initial weights and the data order")->capture_default_str();
  sub->add_option("--mem-per-rank", o->mem_per_rank, "memory limit per rank for the whole job: layers stream or change grids to fit (e.g. 48MiB)");
  sub->add_flag("--reproducible", o->reproducible,
                "the same bits on any number of ranks: data-parallel grids, per-sample kernels, double sums");
  sub->add_option("--family", o->family, "grids: any (planner), data_parallel, batch_spatial, channel_filter")
      ->capture_default_str();
  sub->add_option("--grid", o->grid, "Pn,Pk,Pc,Ph,Pw for every layer it fits (the planner's grid elsewhere)");
  sub->add_option("--progress", o->progress, "auto (a bar on a terminal outside mpirun), bar, lines, none")
      ->capture_default_str();
  sub->add_option("--checkpoint-dir", o->checkpoint_dir, "directory of checkpoints");
  sub->add_option("--checkpoint-every", o->checkpoint_every, "also checkpoint every STEPS steps (0: per epoch)")
      ->capture_default_str();
  sub->add_flag("--resume", o->resume, "continue from the newest valid checkpoint in --checkpoint-dir");
  sub->add_option("--json", o->json, "write the run's log (epochs[], layers[], words per step) here");
  sub->add_option("--data-dir", o->data_dir, "Fashion-MNIST IDX files (gzip)")->capture_default_str();
  sub->add_option("--train-samples", o->train_samples, "use only the first N training samples (0: all)");
  sub->add_option("--test-samples", o->test_samples, "use only the first N test samples (0: all)");
  sub->add_option("--threads", o->threads, "kernel threads per rank (0: the default)");
  sub->add_option("--progress-every", o->progress_every, "steps between progress lines (not a terminal)")
      ->capture_default_str();
  sub->add_flag("--log-steps", o->log_steps, "add every step's loss to --json (steps[])");
  sub->add_option("--kill-at", o->kill_at, "testing: rank R kills itself (SIGKILL) before step S, as R:S")
      ->group("");
  registry.emplace_back(sub, [o] { return run_train(*o); });
}

}  // namespace convgrid::cli
