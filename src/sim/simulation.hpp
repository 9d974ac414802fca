// The points where the SMPI build (CMake option CONVGRID_SMPI, SimGrid's simulated MPI) differs
// from the Open MPI build. Everything else, every algorithm included, is the same code in both.
//
//  1. global state: RankState (rank_state.hpp), one per MPI rank. Under Open MPI a rank is a
//     process; under SMPI every rank is a context of one process, so state a rank keeps is
//     looked up through SMPI's per-rank user data rather than held in a process global.
//  2. local compute: ComputeMode (compute.hpp). `run` runs the kernels (SMPI times them and
//     scales the time to the platform's core speed); `model` skips them (and, in training, the
//     element-wise layers' local work) and injects their modelled flops into the simulated
//     clock; `comm` skips them and injects nothing (SMPI build only).
//  3. buffer allocation: allocate_buffer_bytes (allocation.hpp). In model and comm modes,
//     buffers of 64 KiB or more are folded onto shared pages (SMPI_SHARED_MALLOC), so thousands
//     of ranks fit in memory. The all-gathers and reduce-scatters of tensor data run inside
//     folding_temporaries, which lets a preloaded library fold SimGrid's own temporaries for them
//     too (below).
//  4. file I/O: npy slices use MPI-IO under Open MPI; SMPI's hosts have no disk, so the SMPI
//     build reads and writes each rank's runs with POSIX calls (io/npy_slices.cpp).
//  5. wall-clock guards: the stall watchdog (train/stall_watchdog.hpp) and the stop signals
//     (train/stop_signals.hpp) are off: time is simulated, and the ranks share one process.
//  6. a zero-count all-reduce is not passed to SimGrid, whose selector divides by the count
//     (comm/collectives.cpp); its traffic is counted all the same.
//  7. the sends of a point-to-point exchange (comm/exchange.cpp: redistributions, halos, box
//     exchanges) are synchronous (MPI_Issend). SimGrid 3.32 keeps every small ("detached",
//     eager) send of the whole simulation in one list and removes each from it by a linear search
//     when it is delivered, so an exchange of n messages costs n^2: 65,536 messages of 8 words
//     (fc1000's input after a batch x spatial grid at P = 1024) did not finish in 10 minutes. A
//     synchronous send is never detached and is kept in its sender's own list. Simulated time: a
//     send completes on delivery, when its receiver's receive does, instead of at once; a
//     ResNet-50 step at batch 64 on 64 simulated GPUs took 15.943 ms instead of 15.933 ms.
//  8. the start of a timed phase (phase_start.hpp): a barrier under Open MPI; under SMPI every
//     rank starts at one simulated instant, as the cost model assumes, instead of when the
//     barrier's last message reaches it (up to 9 us later on some ranks than on others on 64
//     simulated GPUs, against passes of 13-90 us).
//  9. ending the job from some of its ranks (job_abort.hpp): MPI_Abort under Open MPI; under SMPI
//     the simulator process exits with status 1, because SimGrid 3.32's MPI_Abort kills every rank
//     but drops the error code, and the failed simulation ended with status 0.
// 10. a blocking reduce-scatter in which some rank's count is zero (comm/collectives.cpp) is a
//     reduce to rank 0 and a scatterv, Open MPI's "non-overlapping" algorithm, under SMPI; the
//     Open MPI build calls MPI_Reduce_scatter. For small vectors Open MPI's choice (and SimGrid's
//     selector, which has the same table) is recursive halving, and SimGrid 3.32's copy of it
//     posts a round's receive only when this rank also sends: a partner whose part is empty
//     leaves stale words that are added into the sum (found by tests/mpi/grid_conv_test at 32
//     ranks: a dKer block of 12 elements over a fibre of 16). Open MPI's own recursive halving
//     receives whatever is sent.
// Outside the library, scripts/smpirun.sh preloads into the simulator
// platforms/folded_file_on_tmpfs.cpp (SimGrid's file behind folded buffers on a tmpfs: host time
// only) and, in model and comm modes, platforms/folded_collective_temporaries.cpp (the malloc of
// a rank inside folding_temporaries folds 64 KiB or more: host memory only).
#pragma once

namespace convgrid::sim {

#ifdef CONVGRID_SMPI
inline constexpr bool kSimulated = true;
#else
inline constexpr bool kSimulated = false;
#endif
inline constexpr bool kSendsSynchronous = kSimulated;

}  // namespace convgrid::sim
