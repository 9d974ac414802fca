// A training job from start to end, the one entry point behind `convgrid train` (which only
// parses flags) and `convgrid plan --passes train` (which plans the same job without running it):
// load the data, plan every layer for the job's ranks under its memory limit, build the
// distributed network, run the epochs, and report what moved and what was held against the model.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/kernel_threads.hpp"
#include "nn/network.hpp"
#include "plan/network_planner.hpp"
#include "train/augment.hpp"
#include "train/dist_net.hpp"
#include "train/stall_watchdog.hpp"
#include "train/trainer.hpp"
#include "train/training_memory.hpp"

namespace convgrid {

// How the job's layers are planned: the network planner's options (procs, the train passes,
// objective, profile, the memory limit of the whole job per rank, family), optionally one grid
// for every layer it fits, and the arithmetic.
struct JobPlanOptions {
  NetworkPlanOptions planner;
  std::string grid;  // "Pn,Pk,Pc,Ph,Pw": every layer it fits (the planner's grid elsewhere)
  bool reproducible = false;
};

struct TrainingJobPlan {
  NetworkPlan plan;              // the planner's
  std::vector<LayerPlan> plans;  // what runs: the grid given applied, fitted, algorithms set
  TrainingMemory busiest;        // modelled, the busiest rank, for `plans`
  TrainingMemory unconstrained;  // the same for the planner's plans without a limit
};

// Throws InputError for options that contradict each other, a grid of another rank count, and
// a memory limit no plan meets (naming the least found).
TrainingJobPlan plan_training_job(const Network& net, const JobPlanOptions& options);

struct TrainDataOptions {
  // Synthetic data (train/synthetic_batches.hpp) for any network input, or Fashion-MNIST.
  bool synthetic = false;
  std::string dir;  // Fashion-MNIST's IDX files
  // The first ones; 0: all (synthetic: 8 batches to train, 1 to test).
  int64_t train_samples = 0, test_samples = 0;
  AugmentOptions augment;  // training set only (Fashion-MNIST)
};

struct TrainJobOptions {
  std::string network = "fmnist";  // built-in, JSON or ONNX file (nn/load_network.hpp)
  std::optional<Activation> input_shape;  // an ONNX model's, where its file leaves it symbolic
  int64_t batch = 64;
  uint64_t seed = 1;
  JobPlanOptions plan;  // plan.planner.layer.procs is set to the job's ranks
  TrainOptions train;   // epochs, optimiser, schedule, checkpoints
  TrainDataOptions data;
  int threads = 0;    // kernel threads per rank; 0: the default
  StallOptions stall;  // the stall watchdog (train/stall_watchdog.hpp), on by default
};

// The options of a job that shape its trajectory (TrainState::recipe), by flag name: the learning
// rate and its schedule (the epochs when the schedule depends on them), the optimiser, the data,
// its `train_samples` (the count the job trains on) and its augmentation.
std::map<std::string, std::string> training_recipe(const TrainJobOptions& options,
                                                     int64_t train_samples);

// What one node of the network received in the job's last training step, on the busiest rank,
// and what the model says (TrainLayer::modelled_words), in its own work and in its inputs' moves;
// and the seconds it took (DistNet::last_step_seconds), the slowest rank's and the mean over ranks.
struct NodeStepReport {
  std::string name, kind;
  LayerWords measured, modelled, measured_edge, modelled_edge;
  bool equal_on_every_rank = true;  // measured == modelled on every rank, both parts
  DistNet::NodeSeconds seconds_max, seconds_mean;
};

struct TrainJobReport {
  std::string network;
  int64_t procs = 0, batch = 0, train_count = 0, test_count = 0;
  ThreadFit threads;  // rank 0's kernel threads
  TrainingJobPlan plan;
  std::vector<NodeStepReport> nodes;  // empty when no training step ran
  std::vector<int64_t> tracked_bytes_by_rank, modelled_bytes_by_rank;  // on rank 0 only
  int64_t peak_bytes = 0, data_bytes = 0;                              // the busiest rank's
  std::vector<EpochRecord> epochs;
  std::vector<StepRecord> steps;
  std::string last_checkpoint;
};

struct TrainJobObserver {
  // Once the network is built, before the first step (every rank).
  std::function<void(const TrainJobReport&)> started;
  TrainObserver trainer;
};

// Collective over `world`. Throws InputError for bad options, data or networks, and for a
// checkpoint directory that cannot be written (checked before anything else is done); throws
// JobStopped when a stop signal ends the job early (train/stop_signals.hpp). A rank that makes
// no progress within the stall limit ends its process (train/stall_watchdog.hpp).
TrainJobReport run_training_job(const Communicator& world, TrainJobOptions options,
                                const TrainJobObserver& observer);

}  // namespace convgrid
