// convgrid train: distributed training on Fashion-MNIST (SPEC section 8). This file parses the
// flags and prints; the job itself (planning every layer at the job's ranks and batch under the
// memory limit, the distributed network, the epochs) is train/training_job.hpp.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "convgrid/error.hpp"
#include "io/idx.hpp"
#include "io/output_paths.hpp"
#include "kernel_flags.hpp"
#include "network_flags.hpp"
#include "plan_flags.hpp"
#include "sim/compute.hpp"
#include "train/stop_signals.hpp"
#include "train/training_job.hpp"
#include "train_progress.hpp"
#include "train_report.hpp"

namespace convgrid::cli {
namespace {

struct TrainCliOptions {
  TrainJobOptions job;
  float lr = 0.02f, momentum = 0.9f, weight_decay = 5e-4f;
  std::string lr_schedule = "constant";
  double warmup_epochs = 0;
  std::vector<int64_t> milestones;
  double lr_gamma = 0.1;
  std::string mem_per_rank;
  std::string family = "any";
  std::string progress = "auto";  // auto | bar | lines | none
  std::string json;
  int64_t progress_every = 100;
  bool log_steps = false;
  std::string raise_at;  // "R:S:SIGNAL", testing only
  std::string stall_timeout = "auto";
  std::string data = "fashion-mnist";
  std::string compute = "run";
  std::string objective = "volume", profile = "ib100-cpu";
};

GridFamily parse_family(const std::string& s) {
  if (s == "any") return GridFamily::any;
  for (GridFamily f :
       {GridFamily::data_parallel, GridFamily::batch_spatial, GridFamily::channel_filter}) {
    if (s == to_string(f)) return f;
  }
  throw InputError(
      fmt::format("--family {}: expected any, data_parallel, batch_spatial or channel_filter", s));
}

// --stall-timeout: auto (the watchdog's default rule), 0 (off) or a number of seconds.
StallOptions parse_stall_timeout(const std::string& s) {
  if (s == "auto") return {};
  double seconds = -1;
  size_t used = 0;
  try {
    seconds = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || !std::isfinite(seconds) || seconds < 0) {
    throw InputError(
        fmt::format("--stall-timeout {}: expected auto, 0 (off) or a number of seconds", s));
  }
  if (seconds == 0) return {std::nullopt, false};
  return {seconds, true};
}

// --raise-at RANK:STEP:SIGNAL (testing).
void parse_raise_at(const std::string& s, TrainOptions& t) {
  static const std::map<std::string, int> kSignals = {
      {"KILL", SIGKILL}, {"STOP", SIGSTOP}, {"TERM", SIGTERM}, {"INT", SIGINT}, {"USR1", SIGUSR1}};
  char name[8] = {};
  int used = 0;
  if (std::sscanf(s.c_str(), "%d:%ld:%7[A-Z1]%n", &t.raise_rank, &t.raise_step, name, &used) != 3 ||
      used != static_cast<int>(s.size()) || !kSignals.contains(name) || t.raise_rank < 0 ||
      t.raise_step < 1) {
    throw InputError(fmt::format(
        "--raise-at {}: expected RANK:STEP:SIGNAL, STEP from 1, SIGNAL one of KILL, STOP, TERM, "
        "INT, USR1",
        s));
  }
  t.raise_signal = kSignals.at(name);
}

// The flags as the job's options.
TrainJobOptions job_options(const TrainCliOptions& o, int64_t procs) {
  TrainJobOptions job = o.job;
  job.data.synthetic = o.data == "synthetic";
  job.train.sgd = SgdOptions{o.lr, o.momentum, o.weight_decay};
  job.train.schedule.kind = parse_lr_kind(o.lr_schedule);
  job.train.schedule.warmup_epochs = o.warmup_epochs;
  job.train.schedule.milestones = o.milestones;
  job.train.schedule.gamma = o.lr_gamma;
  if (!o.raise_at.empty()) parse_raise_at(o.raise_at, job.train);
  job.stall = parse_stall_timeout(o.stall_timeout);
  job.plan.planner.layer =
      plan_options(PlanFlags{"train", o.objective, o.profile, o.mem_per_rank}, procs);
  job.plan.planner.family = parse_family(o.family);
  if (o.progress != "auto" && o.progress != "bar" && o.progress != "lines" &&
      o.progress != "none") {
    throw InputError(fmt::format("--progress {}: expected auto, bar, lines or none", o.progress));
  }
  return job;
}

int run_train(const TrainCliOptions& o) {
  apply_compute_flag(o.compute);
  if (o.job.plan.reproducible && sim::kernels_skipped()) {
    throw InputError(fmt::format("--reproducible compares bits: it needs --compute run, not {}", o.compute));
  }
  const Communicator world = Communicator::world();
  const bool root = world.rank() == 0;
  const TrainJobOptions job = job_options(o, world.size());
  // Under mpirun rank 0's output is a pseudo-terminal whatever mpirun's own is: auto draws the
  // bar only outside mpirun.
  const bool bar = o.progress == "bar" ||
                   (o.progress == "auto" && std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr &&
                    isatty(STDOUT_FILENO) != 0);
  TrainProgress progress(root && o.progress != "none", bar, job.train.epochs, o.progress_every);
  TrainJobObserver observer;
  observer.started = [&](const TrainJobReport& r) {
    if (!root) return;
    print_job_start(r, job.plan.reproducible);
    if (sim::kernels_skipped()) {
      fmt::print("compute {}: the kernels are skipped ({}), so the losses are not computed; the "
                 "words are, and each step is timed on the simulated cluster\n",
                 o.compute,
                 o.compute == "model" ? "their modelled flops injected" : "no compute time");
    }
  };
  observer.trainer.note = [&](const std::string& s) {
    if (root) fmt::print("{}\n", s);
  };
  observer.trainer.step = [&](int64_t epoch, int64_t batch, int64_t batches, double loss,
                              double rate) {
    progress.step(epoch, batch, batches, loss, rate, job.batch);
  };
  observer.trainer.epoch = [&](const EpochRecord& r) {
    progress.end_line();
    if (root) {
      fmt::print(
          "epoch {}: train loss {:.4f} accuracy {:.4f} | test loss {:.4f} accuracy {:.4f} | lr "
          "{:.4g} | "
          "{:.0f} samples/s ({:.1f} s)\n",
          r.epoch, r.train_loss, r.train_accuracy, r.test_loss, r.test_accuracy, r.lr,
          r.samples_per_s, r.seconds);
      std::fflush(stdout);
    }
  };
  check_output_file(world, o.json, "--json");
  // SIGTERM, SIGINT, SIGUSR1: checkpoint at the next step boundary and stop (stop_signals.hpp).
  const StopSignals stop_signals;
  const TrainJobReport report = run_training_job(world, job, observer);
  if (!root) return 0;
  if (!report.epochs.empty())
    print_job_end(report, o.mem_per_rank, job.plan.grid.empty() && !job.plan.reproducible);
  if (!o.json.empty()) {
    nlohmann::json options = {{"seed", job.seed},
                              {"lr", o.lr},
                              {"momentum", o.momentum},
                              {"weight_decay", o.weight_decay},
                              {"lr_schedule", o.lr_schedule},
                              {"warmup_epochs", o.warmup_epochs},
                              {"crop_padding", job.data.augment.crop_padding},
                              {"flip", job.data.augment.flip},
                              {"arithmetic", job.plan.reproducible ? "reproducible" : "fast"}};
    if (job.plan.planner.layer.mem_per_rank_bytes)
      options["mem_per_rank_bytes"] = *job.plan.planner.layer.mem_per_rank_bytes;
    write_job_json(o.json, report, options, o.log_steps);
  }
  return 0;
}

}  // namespace

void add_train_command(CLI::App& app, Registry& registry) {
  auto o = std::make_shared<TrainCliOptions>();
  TrainJobOptions& j = o->job;
  j.data.dir = FashionMnist{}.dir;
  CLI::App* sub =
      app.add_subcommand("train", "train a network on Fashion-MNIST over MPI (run under mpirun)");
  sub->add_option("--network", j.network,
                  "built-in network (fmnist, resnet-fmnist), a JSON network file or an ONNX model "
                  "(.onnx: its initializers are the initial weights)")
      ->capture_default_str();
  add_input_shape_flag(sub, j.input_shape);
  sub->add_option("--epochs", j.train.epochs, "epochs to train")->capture_default_str();
  sub->add_option("--batch", j.batch, "global batch size")->capture_default_str();
  sub->add_option("--lr", o->lr, "learning rate (the schedule's base)")->capture_default_str();
  sub->add_option("--lr-schedule", o->lr_schedule,
                  "constant, cosine (to 0 at the end) or steps (--milestones)")
      ->capture_default_str();
  sub->add_option("--warmup-epochs", o->warmup_epochs,
                  "linear warm-up over these epochs (may be fractional)")
      ->capture_default_str();
  sub->add_option("--milestones", o->milestones,
                  "epochs at which the steps schedule multiplies by --lr-gamma")
      ->delimiter(',');
  sub->add_option("--lr-gamma", o->lr_gamma, "factor of the steps schedule")->capture_default_str();
  sub->add_option("--momentum", o->momentum, "SGD momentum")->capture_default_str();
  sub->add_option("--weight-decay", o->weight_decay, "L2 weight decay")->capture_default_str();
  sub->add_option("--crop-padding", j.data.augment.crop_padding,
                  "augmentation: zero padding before a random crop to the image size (0: none)")
      ->capture_default_str();
  sub->add_flag("--flip", j.data.augment.flip, "augmentation: random horizontal flips");
  sub->add_option("--seed", j.seed, "seed of the initial weights, the data order and augmentation")
      ->capture_default_str();
  sub->add_option(
      "--mem-per-rank", o->mem_per_rank,
      "memory limit per rank for the whole job: layers stream or change grids to fit (e.g. 48MiB)");
  sub->add_flag(
      "--reproducible", j.plan.reproducible,
      "the same bits on any number of ranks: data-parallel grids, per-sample kernels, double sums");
  sub->add_option("--family", o->family,
                  "grids: any (planner), data_parallel, batch_spatial, channel_filter")
      ->capture_default_str();
  sub->add_option("--objective", o->objective,
                  "what the planner minimises: volume (words) or time (modelled, on --profile)")
      ->check(CLI::IsMember({"volume", "time"}))
      ->capture_default_str();
  sub->add_option("--profile", o->profile,
                  "machine profile the planner models: a built-in name or a JSON file")
      ->capture_default_str();
  sub->add_option("--grid", j.plan.grid,
                  "Pn,Pk,Pc,Ph,Pw for every layer it fits (the planner's grid elsewhere)");
  sub->add_option("--progress", o->progress,
                  "auto (a bar on a terminal outside mpirun), bar, lines, none")
      ->capture_default_str();
  sub->add_option("--checkpoint-dir", j.train.checkpoint_dir, "directory of checkpoints");
  sub->add_option("--checkpoint-every", j.train.checkpoint_every,
                  "also checkpoint every STEPS steps (0: per epoch)")
      ->capture_default_str();
  sub->add_flag("--resume", j.train.resume,
                "continue from the newest valid checkpoint in --checkpoint-dir");
  sub->add_option("--json", o->json,
                  "write the run's log (epochs[], layers[], nodes[] words, memory) here");
  sub->add_option("--data", o->data,
                  "fashion-mnist, or synthetic (seeded inputs and labels for any network)")
      ->check(CLI::IsMember({"fashion-mnist", "synthetic"}))
      ->capture_default_str();
  sub->add_option("--data-dir", j.data.dir, "Fashion-MNIST IDX files (gzip)")
      ->capture_default_str();
  sub->add_option("--train-samples", j.data.train_samples,
                  "use only the first N training samples (0: all)");
  sub->add_option("--test-samples", j.data.test_samples,
                  "use only the first N test samples (0: all)");
  add_threads_flag(sub, j.threads);
  add_compute_flag(sub, o->compute);
  sub->add_option("--progress-every", o->progress_every,
                  "steps between progress lines (not a terminal)")
      ->capture_default_str();
  sub->add_flag("--log-steps", o->log_steps, "add every step's loss to --json (steps[])");
  sub->add_option("--stall-timeout", o->stall_timeout,
                  "seconds without progress before the job ends with an error (a rank stopped or "
                  "died); auto: 20x the median step, at least 60 s; 0: never")
      ->capture_default_str();
  sub->add_option("--raise-at", o->raise_at,
                  "testing: rank R raises SIGNAL (KILL, STOP, TERM, INT, USR1) on itself before "
                  "step S, as R:S:SIGNAL")
      ->group("");
  registry.emplace_back(sub, [o] { return run_train(*o); });
}

}  // namespace convgrid::cli
