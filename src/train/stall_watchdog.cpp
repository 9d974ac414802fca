// The stall watchdog (see stall_watchdog.hpp).
#include "train/stall_watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "sim/simulation.hpp"

namespace convgrid {
namespace {

constexpr size_t kRecentSteps = 100;
// After its line, a rank waits this long before ending, so that the other stalled ranks, whose
// limits ran out at about the same time, print theirs before the launcher kills them.
constexpr auto kGrace = std::chrono::seconds(2);

}  // namespace

double default_step_limit(const std::deque<double>& recent) {
  if (recent.empty()) return kStallLongPhaseSeconds;
  std::vector<double> v(recent.begin(), recent.end());
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return std::max(kStallLeastSeconds, kStallStepMultiple * v[v.size() / 2]);
}

StallWatchdog::StallWatchdog(int rank, StallOptions options)
    : rank_(rank), options_(options), since_(std::chrono::steady_clock::now()) {
  if (sim::kSimulated || !options_.enabled) return;
  thread_ = std::thread([this] { watch(); });
}

StallWatchdog::~StallWatchdog() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void StallWatchdog::enter(Phase phase, std::string what) {
  {
    std::lock_guard lock(mutex_);
    phase_ = phase;
    what_ = std::move(what);
    since_ = std::chrono::steady_clock::now();
  }
  wake_.notify_all();
}

void StallWatchdog::step_took(double seconds) {
  std::lock_guard lock(mutex_);
  recent_.push_back(seconds);
  if (recent_.size() > kRecentSteps) recent_.pop_front();
}

double StallWatchdog::limit() const {
  std::lock_guard lock(mutex_);
  return limit_locked();
}

double StallWatchdog::limit_locked() const {
  if (sim::kSimulated || !options_.enabled) return std::numeric_limits<double>::infinity();
  if (options_.seconds) return *options_.seconds;
  if (phase_ == Phase::start || phase_ == Phase::checkpoint) return kStallLongPhaseSeconds;
  return default_step_limit(recent_);
}

std::chrono::steady_clock::time_point StallWatchdog::deadline_locked() const {
  // At most about three years ahead: a larger limit would overflow the clock's nanoseconds.
  const double seconds = std::min(limit_locked(), 1e8);
  return since_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(seconds));
}

void StallWatchdog::watch() {
  std::unique_lock lock(mutex_);
  while (!done_) {
    wake_.wait_until(lock, deadline_locked());
    if (done_ || std::chrono::steady_clock::now() < deadline_locked()) continue;
    const char* source = options_.seconds ? "--stall-timeout" : "the default; --stall-timeout sets it";
    std::fprintf(stderr,
                 "convgrid: error on rank %d: stalled: no progress for %.0f s (%s) in %s; another "
                 "rank may have stopped or died: ending the job\n",
                 rank_, limit_locked(), source, what_.c_str());
    std::fflush(stderr);
    std::this_thread::sleep_for(kGrace);
    std::_Exit(kExitStalled);
  }
}

}  // namespace convgrid
