// The training loop (see trainer.hpp). Checkpoints hold the state after a step; when that step
// ends an epoch, the state already points at the next epoch, so every run writes the same bytes
// for the same step however it got there.
#include "train/trainer.hpp"

#include <fmt/format.h>

#include <mpi.h>

#include <csignal>

#include "convgrid/error.hpp"
#include "sim/phase_start.hpp"
#include "train/stop_signals.hpp"

// Epochs and steps are timed on MPI's clock: wall time under Open MPI, simulated time under SMPI.
namespace convgrid {

Trainer::Trainer(const Communicator& world, DistNet& net, BatchSource& train, BatchSource& test,
                 TrainState initial, TrainOptions options, StallWatchdog* watchdog)
    : world_(world), net_(net), train_(train), test_(test), state_(std::move(initial)),
      options_(std::move(options)), sgd_(net.params(), options_.sgd),
      schedule_(options_.sgd.lr, options_.schedule, train.batches(), options_.epochs),
      watchdog_(watchdog), labels_(net.batch()), weights_(net.batch()) {}

void Trainer::mark(StallWatchdog::Phase phase, std::string what) {
  if (watchdog_ != nullptr) watchdog_->enter(phase, std::move(what));
}

void Trainer::resume(const TrainObserver& observer) {
  const auto note = [&](const std::string& s) {
    if (observer.note) observer.note(s);
  };
  const std::map<std::string, std::string> recipe = state_.recipe;
  for (const std::string& path : list_checkpoints(options_.checkpoint_dir)) {
    try {
      state_ = read_checkpoint(path, state_, train_.batches(), net_.params(), sgd_.velocity(),
                               net_.state());
      note(fmt::format("resumed from {} (epoch {}, step {})", path, state_.epoch + 1, state_.step));
      last_checkpoint_ = path;
      last_checkpoint_step_ = state_.step;
      if (state_.recipe.empty()) {
        note(fmt::format("{} does not record the learning rate, schedule, optimiser and data "
                         "options (an older convgrid wrote it): they are not checked",
                         path));
      }
      state_.recipe = recipe;
      return;
    } catch (const OtherRunCheckpoint&) {
      throw;
    } catch (const InputError& e) {
      note(fmt::format("{}; trying the one before", e.what()));
    }
  }
  note(fmt::format("no valid checkpoint in {}: starting from the beginning", options_.checkpoint_dir));
}

void Trainer::checkpoint() {
  if (options_.checkpoint_dir.empty() || last_checkpoint_step_ == state_.step) return;
  mark(StallWatchdog::Phase::checkpoint, fmt::format("the checkpoint of step {}", state_.step));
  try {
    last_checkpoint_ = write_checkpoint(world_, options_.checkpoint_dir, state_, net_.params(),
                                        sgd_.velocity(), net_.state());
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}; {}", e.what(),
                                 last_checkpoint_.empty()
                                     ? std::string("no earlier checkpoint of this run")
                                     : fmt::format("the last good one, {}, is intact (--resume "
                                                   "continues from it)",
                                                   last_checkpoint_)));
  }
  last_checkpoint_step_ = state_.step;
}

void Trainer::stop_if_signalled() {
  const int sig = agreed_stop_signal(world_);
  if (sig == 0) return;
  checkpoint();
  throw stopped_by_signal(world_.rank(), sig, state_.step,
                          options_.checkpoint_dir.empty() ? std::string() : last_checkpoint_);
}

EpochRecord Trainer::evaluate(int64_t epoch) {
  EpochRecord rec;
  rec.epoch = epoch;
  test_.start_epoch(0, net_.input_slice().box.r[0]);
  double loss = 0, weight = 0;
  int64_t correct = 0;
  for (int64_t b = 0; b < test_.batches(); ++b) {
    stop_if_signalled();
    mark(StallWatchdog::Phase::test,
         fmt::format("test batch {} of {} after epoch {}", b + 1, test_.batches(), epoch));
    test_.fill(b, net_.input_tensor(), net_.input_slice(), net_.input(), labels_, weights_);
    const XentResult r = net_.step(labels_, weights_, false);
    loss += r.loss * r.weight;
    weight += r.weight;
    correct += r.correct;
  }
  rec.test_loss = loss / weight;
  rec.test_accuracy = static_cast<double>(correct) / weight;
  return rec;
}

std::vector<EpochRecord> Trainer::run(const TrainObserver& observer) {
  if (options_.resume && !options_.checkpoint_dir.empty()) resume(observer);
  std::vector<EpochRecord> records;
  const Range samples = net_.input_slice().box.r[0];
  while (state_.epoch < options_.epochs) {
    const int64_t epoch = state_.epoch;
    train_.start_epoch(epoch, samples);
    // Every rank starts the epoch's first step together (a barrier; one simulated instant under
    // SMPI). The set-up before it (parameter broadcasts, the fibres' communicators) leaves the
    // ranks at different times, and the first step's time would include that skew: 2-4% of a
    // step on 64 simulated GPUs (docs/scale.md, "The real training step").
    sim::start_together(world_);
    const double start = MPI_Wtime();
    int64_t trained = 0;  // samples trained in this run (a resumed epoch counts from its start)
    EpochRecord rec;
    for (int64_t b = state_.batch_in_epoch; b < train_.batches(); ++b) {
      stop_if_signalled();
      mark(StallWatchdog::Phase::step,
           fmt::format("step {}, batch {} of epoch {}", state_.step + 1, b + 1, epoch + 1));
      if (world_.rank() == options_.raise_rank && state_.step + 1 == options_.raise_step)
        std::raise(options_.raise_signal);
      const double step_start = MPI_Wtime();
      train_.fill(b, net_.input_tensor(), net_.input_slice(), net_.input(), labels_, weights_);
      const XentResult r = net_.step(labels_, weights_, true);
      sgd_.set_lr(static_cast<float>(schedule_.lr(state_.step)));
      sgd_.step(net_.params());
      const double step_seconds = MPI_Wtime() - step_start;
      if (watchdog_ != nullptr) watchdog_->step_took(step_seconds);
      ++state_.step;
      state_.batch_in_epoch = b + 1;
      state_.epoch_loss_sum += r.loss * r.weight;
      state_.epoch_correct += r.correct;
      state_.epoch_samples += static_cast<int64_t>(r.weight);
      trained += static_cast<int64_t>(r.weight);
      steps_.push_back({state_.step, r.loss, step_seconds});
      const double elapsed = MPI_Wtime() - start;
      if (observer.step) observer.step(epoch + 1, b + 1, train_.batches(), r.loss, trained / std::max(elapsed, 1e-9));
      const bool last = b + 1 == train_.batches();
      if (last) {
        rec.train_loss = state_.epoch_loss_sum / static_cast<double>(state_.epoch_samples);
        rec.train_accuracy = static_cast<double>(state_.epoch_correct) / static_cast<double>(state_.epoch_samples);
        rec.lr = sgd_.options().lr;
        state_.epoch = epoch + 1;
        state_.batch_in_epoch = 0;
        state_.epoch_loss_sum = 0;
        state_.epoch_correct = 0;
        state_.epoch_samples = 0;
      }
      if (last || (options_.checkpoint_every > 0 && state_.step % options_.checkpoint_every == 0)) {
        if (last) rec.seconds = MPI_Wtime() - start;
        checkpoint();
      }
    }
    rec.samples_per_s = trained / std::max(rec.seconds, 1e-9);
    const EpochRecord test = evaluate(epoch + 1);
    rec.epoch = epoch + 1;
    rec.test_loss = test.test_loss;
    rec.test_accuracy = test.test_accuracy;
    records.push_back(rec);
    if (observer.epoch) observer.epoch(rec);
  }
  return records;
}

}  // namespace convgrid
