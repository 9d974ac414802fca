// Kernel threads fitted to the launch (comm/kernel_threads.hpp): the share of a rank's cores for
// the bindings mpirun gives, and oversubscription.
#include "comm/kernel_threads.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

namespace convgrid {
namespace {

// A mask of CPUs [first, last].
CpuMask cpus(int first, int last) {
  CpuMask m(2, 0);  // 128 CPUs
  for (int i = first; i <= last; ++i) m[static_cast<size_t>(i) / 64] |= uint64_t{1} << (i % 64);
  return m;
}

std::vector<CpuMask> repeat(const CpuMask& m, int n) { return std::vector<CpuMask>(static_cast<size_t>(n), m); }

TEST(KernelThreads, BoundToACoreEach) {
  const std::vector<CpuMask> node{cpus(0, 0), cpus(1, 1)};
  for (int r : {0, 1}) {
    const ThreadFit f = fit_threads(node, r);
    EXPECT_EQ(f.threads, 1);
    EXPECT_EQ(f.sharers, 1);
    EXPECT_FALSE(f.oversubscribed);
  }
}

TEST(KernelThreads, UnboundRanksShareTheNode) {
  // mpirun --bind-to none, 2 ranks on a 2-core machine: one thread each, not two.
  ThreadFit f = fit_threads(repeat(cpus(0, 1), 2), 1);
  EXPECT_EQ(f.threads, 1);
  EXPECT_EQ(f.cores, 2);
  EXPECT_EQ(f.sharers, 2);
  EXPECT_FALSE(f.oversubscribed);
  // 64 unbound ranks on a 64-core node: 64 threads in all, not 4096.
  f = fit_threads(repeat(cpus(0, 63), 64), 17);
  EXPECT_EQ(f.threads, 1);
  // One rank alone takes every core.
  f = fit_threads({cpus(0, 63)}, 0);
  EXPECT_EQ(f.threads, 64);
}

TEST(KernelThreads, SocketBindingsSplitTheirSocket) {
  // 2 sockets of 16 cores, 4 ranks bound to sockets: 8 threads each.
  const std::vector<CpuMask> node{cpus(0, 15), cpus(0, 15), cpus(16, 31), cpus(16, 31)};
  for (int r = 0; r < 4; ++r) EXPECT_EQ(fit_threads(node, r).threads, 8) << r;
  // Uneven: two ranks on cores 0-3, one alone on 4-7.
  const std::vector<CpuMask> uneven{cpus(0, 3), cpus(0, 3), cpus(4, 7)};
  EXPECT_EQ(fit_threads(uneven, 0).threads, 2);
  EXPECT_EQ(fit_threads(uneven, 2).threads, 4);
  EXPECT_EQ(fit_threads(uneven, 2).node_cores, 8);
}

TEST(KernelThreads, MoreRanksThanCoresIsOversubscribed) {
  const ThreadFit f = fit_threads(repeat(cpus(0, 1), 4), 3);
  EXPECT_EQ(f.threads, 1);
  EXPECT_EQ(f.node_ranks, 4);
  EXPECT_EQ(f.node_cores, 2);
  EXPECT_TRUE(f.oversubscribed);
  // Bound ranks stacked on one core (--bind-to core with too many ranks) are too.
  EXPECT_TRUE(fit_threads({cpus(0, 0), cpus(0, 0), cpus(1, 1)}, 0).oversubscribed);
}

TEST(KernelThreads, OwnMaskHasACpu) {
  const CpuMask m = own_cpu_mask();
  int n = 0;
  for (uint64_t w : m) n += __builtin_popcountll(w);
  EXPECT_GE(n, 1);
  EXPECT_EQ(fit_threads({m}, 0).threads, n);
}

}  // namespace
}  // namespace convgrid
