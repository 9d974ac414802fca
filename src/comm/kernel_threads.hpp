// How many kernel threads each rank runs, fitted to the launch. A rank uses the cores of its
// affinity mask, shared with the other ranks of its node whose masks overlap it (the node found
// with MPI_Comm_split_type): `mpirun --bind-to core` gives each rank its core, two unbound ranks
// on a 2-core node take one thread each, and 64 ranks on a 64-core node do not start 4096
// threads. A node with more ranks than the cores of all their masks is oversubscribed; rank 0
// says so once. `--threads N` overrides the fit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.hpp"

namespace convgrid {

// One rank's affinity mask: bit i of word i / 64 is CPU i.
using CpuMask = std::vector<uint64_t>;

struct ThreadFit {
  int threads = 1;         // this rank's share of its cores, at least 1
  int cores = 1;           // CPUs in this rank's affinity mask
  int sharers = 1;         // ranks of the node whose masks overlap this rank's, itself included
  int node_ranks = 1;      // ranks on this rank's node
  int node_cores = 1;      // CPUs in the union of the node's masks
  bool oversubscribed = false;  // node_ranks > node_cores
  std::string source = "fit";   // where `threads` came from: "fit", "--threads" or "OMP_NUM_THREADS"
};

// The fit of rank `me` among the masks of its node's ranks (pure; no MPI).
ThreadFit fit_threads(const std::vector<CpuMask>& node_masks, int me);

// This process's affinity mask (sched_getaffinity).
CpuMask own_cpu_mask();

// Sets this rank's kernel threads: `requested` when above 0, else OMP_NUM_THREADS when it is set
// to a positive count (the usual way to ask an OpenMP program for threads), else the fit.
// Collective over `world`; rank 0 prints one warning to stderr when any node is oversubscribed.
// InputError (before anything collective) for a negative `requested`.
// Under SMPI every rank runs one thread (SMPI times one thread per rank) and nothing is fitted.
// Returns the fit, with `threads` the count in use.
ThreadFit use_kernel_threads(int requested, const Communicator& world);

// "1 kernel thread per rank (2 cores shared by 2 ranks)", or "... (--threads)": for reports.
std::string threads_text(const ThreadFit& fit);

}  // namespace convgrid
