// The stall watchdog. Training moves in lockstep: every step waits on collectives with the other
// ranks, so a rank that stops (SIGSTOP, a hung file system, a livelock) leaves every other rank
// blocked in MPI with no error and no end. A thread on each rank watches the progress marks the
// training loop sets; when none comes within the limit, it prints one line naming the rank, the
// phase it was in and the limit, and ends the process with status 124. The launcher then ends
// the job: mpirun kills the other ranks, a stopped one included. (A rank that dies outright is
// the launcher's to notice: mpirun ends the job at once.)
//
// The limit: --stall-timeout S gives S seconds to every phase. By default the start (planning,
// loading, the first step's primitive creation) and each checkpoint get 10 minutes, and every
// other phase 20 times the median of the last 100 step times, at least 60 s. The watchdog uses
// no MPI, and it is off in the SMPI build (simulated time, and ranks are contexts of one process).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace convgrid {

// The exit status of a rank the watchdog ended (as GNU timeout's).
inline constexpr int kExitStalled = 124;

struct StallOptions {
  std::optional<double> seconds;  // every phase's limit; empty: the default rule above
  bool enabled = true;
};

// The default rule's limits.
inline constexpr double kStallLongPhaseSeconds = 600;  // the start, a checkpoint
inline constexpr double kStallLeastSeconds = 60;
inline constexpr double kStallStepMultiple = 20;

// The limit of a step-like phase under the default rule: kStallStepMultiple x the median of the
// step times given, at least kStallLeastSeconds; kStallLongPhaseSeconds while none is known.
double default_step_limit(const std::deque<double>& recent_step_seconds);

class StallWatchdog {
 public:
  enum class Phase { start, step, test, checkpoint };

  // Starts watching in Phase::start.
  StallWatchdog(int rank, StallOptions options);
  ~StallWatchdog();
  StallWatchdog(const StallWatchdog&) = delete;
  StallWatchdog& operator=(const StallWatchdog&) = delete;

  // A progress mark: the loop enters `phase`; `what` names it in the error ("step 38 of epoch 2").
  void enter(Phase phase, std::string what);
  // A training step took `seconds` (for the default rule's median).
  void step_took(double seconds);
  // The current limit, in seconds (infinite when disabled).
  double limit() const;

 private:
  double limit_locked() const;
  std::chrono::steady_clock::time_point deadline_locked() const;
  void watch();

  const int rank_;
  const StallOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool done_ = false;
  Phase phase_ = Phase::start;
  std::string what_ = "the start (planning, loading the data, building the network)";
  std::chrono::steady_clock::time_point since_;
  std::deque<double> recent_;  // the last 100 step times
  std::thread thread_;
};

}  // namespace convgrid
