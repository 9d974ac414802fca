// Kernel threads fitted to the launch (see kernel_threads.hpp).
#include "comm/kernel_threads.hpp"

#include <sched.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#include <fmt/format.h>

#include "comm/mpi_error.hpp"
#include "convgrid/error.hpp"
#include "convgrid/local_conv.hpp"
#include "sim/simulation.hpp"

namespace convgrid {
namespace {

constexpr size_t kMaskWords = (CPU_SETSIZE + 63) / 64;

int count(const CpuMask& m) {
  int n = 0;
  for (uint64_t w : m) n += std::popcount(w);
  return n;
}

bool overlap(const CpuMask& a, const CpuMask& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if ((a[i] & b[i]) != 0) return true;
  }
  return false;
}

// OMP_NUM_THREADS as a positive count, else 0 (unset, empty, a list of levels or not a number).
int omp_num_threads_env() {
  const char* text = std::getenv("OMP_NUM_THREADS");
  if (text == nullptr) return 0;
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && n > 0 && n <= 4096 ? static_cast<int>(n) : 0;
}

}  // namespace

ThreadFit fit_threads(const std::vector<CpuMask>& node_masks, int me) {
  const CpuMask& mine = node_masks.at(static_cast<size_t>(me));
  ThreadFit f;
  f.cores = std::max(count(mine), 1);
  f.sharers = 0;
  CpuMask all;
  for (const CpuMask& m : node_masks) {
    if (overlap(m, mine) || &m == &mine) ++f.sharers;
    all.resize(std::max(all.size(), m.size()), 0);
    for (size_t i = 0; i < m.size(); ++i) all[i] |= m[i];
  }
  f.node_ranks = static_cast<int>(node_masks.size());
  f.node_cores = std::max(count(all), 1);
  f.threads = std::max(f.cores / f.sharers, 1);
  f.oversubscribed = f.node_ranks > f.node_cores;
  return f;
}

CpuMask own_cpu_mask() {
  cpu_set_t set;
  CPU_ZERO(&set);
  CpuMask mask(kMaskWords, 0);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {  // unknown: every CPU the system has
    const long n = std::min<long>(std::max(1L, static_cast<long>(sysconf(_SC_NPROCESSORS_ONLN))), CPU_SETSIZE);
    for (long i = 0; i < n; ++i) mask[static_cast<size_t>(i) / 64] |= uint64_t{1} << (i % 64);
    return mask;
  }
  for (int i = 0; i < CPU_SETSIZE; ++i) {
    if (CPU_ISSET(i, &set)) mask[static_cast<size_t>(i) / 64] |= uint64_t{1} << (i % 64);
  }
  return mask;
}

ThreadFit use_kernel_threads(int requested, const Communicator& world) {
  if (requested < 0) {
    throw InputError(fmt::format("--threads {}: must be 0 (fit to the launch) or more", requested));
  }
  if constexpr (sim::kSimulated) {
    ThreadFit one;
    set_kernel_threads(1);
    return one;
  }
  MPI_Comm node = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(world.raw(), MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &node),
            "MPI_Comm_split_type");
  int node_rank = 0, node_size = 1;
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  const CpuMask mine = own_cpu_mask();
  std::vector<uint64_t> words(kMaskWords * static_cast<size_t>(node_size));
  const int rc = MPI_Allgather(mine.data(), static_cast<int>(kMaskWords), MPI_UINT64_T, words.data(),
                               static_cast<int>(kMaskWords), MPI_UINT64_T, node);
  MPI_Comm_free(&node);
  check_mpi(rc, "MPI_Allgather");
  std::vector<CpuMask> masks;
  for (int r = 0; r < node_size; ++r) {
    masks.emplace_back(words.begin() + r * kMaskWords, words.begin() + (r + 1) * kMaskWords);
  }
  ThreadFit fit = fit_threads(masks, node_rank);
  int over = fit.oversubscribed ? 1 : 0, any_over = 0;
  check_mpi(MPI_Allreduce(&over, &any_over, 1, MPI_INT, MPI_MAX, world.raw()), "MPI_Allreduce");
  if (any_over != 0 && world.rank() == 0) {
    const std::string where =
        fit.oversubscribed ? fmt::format("{} ranks share {} core{} on rank 0's node", fit.node_ranks, fit.node_cores, fit.node_cores == 1 ? "" : "s")
                           : std::string("a node has more ranks than cores");
    std::fprintf(stderr,
                 "convgrid: warning: oversubscribed: %s; the ranks take turns on the cores (fewer ranks "
                 "per node, or mpirun --bind-to core, run faster)\n",
                 where.c_str());
  }
  int wanted = fit.threads;
  if (requested > 0) {
    wanted = requested;
    fit.source = "--threads";
  } else if (const int env = omp_num_threads_env(); env > 0) {
    wanted = env;
    fit.source = "OMP_NUM_THREADS";
  }
  fit.threads = set_kernel_threads(wanted);
  return fit;
}

std::string threads_text(const ThreadFit& fit) {
  const std::string count = fmt::format("{} kernel thread{} per rank", fit.threads, fit.threads == 1 ? "" : "s");
  if (fit.source != "fit") return fmt::format("{} ({})", count, fit.source);
  return fmt::format("{} ({} core{} shared by {} rank{})", count, fit.cores, fit.cores == 1 ? "" : "s",
                     fit.sharers, fit.sharers == 1 ? "" : "s");
}

}  // namespace convgrid
