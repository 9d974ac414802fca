// Operators' stop requests during training. SIGTERM, SIGINT and SIGUSR1 only set a flag; the
// training loop reads it at every step boundary (and between test batches), and the ranks agree
// through one all-reduce of their flags, so all of them stop after the same step whichever rank
// the signal reached. The trainer then writes a checkpoint when it has a directory, and every
// rank prints one line and exits with status 75 (resumable: run again with --resume), or with
// 128 + the signal's number when nothing was saved. A second signal of the same kind ends the
// process at once: each handler resets itself after the first.
//
// Launchers: Slurm sends SIGTERM to every task and waits KillWait (30 s by default) before
// SIGKILL. Open MPI 4's mpirun forwards SIGTERM and SIGINT to the ranks but kills them 1 s later,
// so a step longer than that is lost there (the previous checkpoint stays); it forwards SIGUSR1
// without killing anything, which makes `kill -USR1 <mpirun>` the reliable request under mpirun.
#pragma once

#include <cstdint>
#include <string>

#include "comm/communicator.hpp"
#include "convgrid/error.hpp"

namespace convgrid {

// The exit status of a job stopped by a signal with its state saved (sysexits' EX_TEMPFAIL).
inline constexpr int kExitStoppedResumable = 75;

// Installs the handlers for its lifetime and restores the previous ones after. It does nothing
// in the SMPI build, where every rank is a context of one simulated process.
class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
};

// Collective over `world`: the largest stop signal number any rank has received, 0 when none.
// Raw MPI, outside the words the layers count.
int agreed_stop_signal(const Communicator& world);

// "SIGTERM", "SIGINT", "SIGUSR1", else "signal N".
std::string signal_name(int sig);

// The stop every rank throws at the step boundary where they agreed to stop: the message names
// the rank, the signal, the last step and the checkpoint written (empty: none), and the status is
// 75 with a checkpoint, 128 + the signal without.
JobStopped stopped_by_signal(int rank, int sig, int64_t step, const std::string& checkpoint);

}  // namespace convgrid
