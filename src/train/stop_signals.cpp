// Stop signals (see stop_signals.hpp): async-signal-safe handlers that store the signal number.
#include "train/stop_signals.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <array>
#include <csignal>

#include "comm/mpi_error.hpp"
#include "convgrid/error.hpp"
#include "sim/simulation.hpp"

namespace convgrid {
namespace {

constexpr std::array<int, 3> kStopSignals = {SIGTERM, SIGINT, SIGUSR1};

volatile std::sig_atomic_t g_received = 0;

extern "C" void on_stop_signal(int sig) {
  if (g_received == 0) g_received = sig;
}

std::array<struct sigaction, kStopSignals.size()> g_previous;

}  // namespace

StopSignals::StopSignals() {
  if constexpr (sim::kSimulated) return;
  g_received = 0;
  for (size_t i = 0; i < kStopSignals.size(); ++i) {
    struct sigaction sa = {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    // SA_RESETHAND: the second signal takes the default action (the process ends at once).
    // SA_RESTART: a blocking system call the signal interrupts is resumed, not failed with EINTR.
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(kStopSignals[i], &sa, &g_previous[i]);
  }
}

StopSignals::~StopSignals() {
  if constexpr (sim::kSimulated) return;
  for (size_t i = 0; i < kStopSignals.size(); ++i) sigaction(kStopSignals[i], &g_previous[i], nullptr);
}

int agreed_stop_signal(const Communicator& world) {
  if constexpr (sim::kSimulated) return 0;
  const int mine = g_received;
  int any = 0;
  check_mpi(MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, world.raw()), "MPI_Allreduce");
  return any;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGUSR1: return "SIGUSR1";
    default: return fmt::format("signal {}", sig);
  }
}

JobStopped stopped_by_signal(int rank, int sig, int64_t step, const std::string& checkpoint) {
  if (checkpoint.empty()) {
    return JobStopped(fmt::format("rank {}: stopped by {} after step {}; nothing saved (no "
                                  "--checkpoint-dir)",
                                  rank, signal_name(sig), step),
                      128 + sig);
  }
  return JobStopped(fmt::format("rank {}: stopped by {} after step {}; checkpoint {} written, "
                                "continue with --resume",
                                rank, signal_name(sig), step, checkpoint),
                    kExitStoppedResumable);
}

}  // namespace convgrid
