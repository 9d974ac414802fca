// The training loop (SPEC section 8): epochs of synchronous SGD steps over a BatchSource on a
// DistNet, a test evaluation after every epoch, and checkpoints every few steps and at the end.
// Deterministic for a seed, grid and rank count: the data order, initial weights and every
// reduction order depend on nothing else, so a resumed run repeats the uninterrupted one exactly.
// Before global step s (0-based) the optimiser's rate is set to float(LrSchedule::lr(s)) of
// train/lr_schedule.hpp, with base = sgd.lr and steps per epoch = the training set's batches: the
// rate depends on the step only, so a resumed run uses the same rates too.
// At every step boundary and between test batches the ranks agree whether a stop signal came
// (train/stop_signals.hpp); if one did, the loop checkpoints (with a directory) and every rank
// throws JobStopped. A StallWatchdog, when given, gets a progress mark at each phase.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "train/batches.hpp"
#include "train/checkpoint.hpp"
#include "train/dist_net.hpp"
#include "train/lr_schedule.hpp"
#include "train/sgd.hpp"
#include "train/stall_watchdog.hpp"

namespace convgrid {

struct TrainOptions {
  int64_t epochs = 1;
  SgdOptions sgd;
  LrScheduleOptions schedule;    // default: constant, no warm-up (every step at sgd.lr)
  std::string checkpoint_dir;    // empty: none
  int64_t checkpoint_every = 0;  // steps; 0: at the end of every epoch only
  bool resume = false;
  // Testing aid: rank raise_rank raises raise_signal on itself before global step raise_step
  // (1-based): SIGKILL for a killed rank, SIGSTOP for a stopped one, SIGTERM for a stop request.
  int raise_rank = -1;
  int64_t raise_step = -1;
  int raise_signal = 0;
};

struct EpochRecord {
  int64_t epoch = 0;  // 1-based
  double train_loss = 0, train_accuracy = 0, test_loss = 0, test_accuracy = 0;
  double samples_per_s = 0;  // training samples over the training loop's wall time
  double seconds = 0;
  double lr = 0;  // the learning rate of the epoch's last step (as Sgd used it, a float)
};

struct StepRecord {
  int64_t step = 0;  // 1-based, over the whole run
  double loss = 0;
  // From filling the batch to the end of the update, on MPI's clock (simulated time under SMPI):
  // this rank's as the loop records it; the slowest rank's in a job's report (training_job.hpp).
  double seconds = 0;
};

// What the loop reports as it goes (called on every rank; the caller prints on rank 0).
struct TrainObserver {
  std::function<void(const std::string&)> note;  // resumed from..., a corrupt checkpoint skipped
  // After each step: epoch (1-based), batch within it (1-based), batches per epoch, loss,
  // samples per second so far in this epoch.
  std::function<void(int64_t, int64_t, int64_t, double, double)> step;
  std::function<void(const EpochRecord&)> epoch;
};

class Trainer {
 public:
  // `watchdog` (may be null) must outlive the trainer.
  Trainer(const Communicator& world, DistNet& net, BatchSource& train, BatchSource& test,
          TrainState initial, TrainOptions options, StallWatchdog* watchdog = nullptr);

  // Runs to the end (resuming first when asked); returns every epoch's record of this run.
  std::vector<EpochRecord> run(const TrainObserver& observer);
  const std::vector<StepRecord>& steps() const { return steps_; }
  // The last checkpoint written (empty when none).
  const std::string& last_checkpoint() const { return last_checkpoint_; }

 private:
  void resume(const TrainObserver& observer);
  EpochRecord evaluate(int64_t epoch);
  void checkpoint();
  // Throws JobStopped on every rank when any rank has received a stop signal.
  void stop_if_signalled();
  void mark(StallWatchdog::Phase phase, std::string what);

  const Communicator& world_;
  DistNet& net_;
  BatchSource& train_;
  BatchSource& test_;
  TrainState state_;
  TrainOptions options_;
  Sgd sgd_;
  LrSchedule schedule_;
  std::vector<StepRecord> steps_;
  std::string last_checkpoint_;
  int64_t last_checkpoint_step_ = -1;
  StallWatchdog* watchdog_;
  std::vector<int32_t> labels_;
  std::vector<float> weights_;
};

}  // namespace convgrid
