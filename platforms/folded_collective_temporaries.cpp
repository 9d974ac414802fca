// Folds the temporary buffers of SimGrid's collective algorithms while a simulated rank runs one of
// convgrid's tensor collectives in model or comm mode: a library that scripts/smpirun.sh preloads
// into the simulator (LD_PRELOAD), built only by the SMPI build. Not part of libconvgrid.
//
// SimGrid 3.32's collectives take their temporaries from malloc (smpi_get_tmp_sendbuffer and
// smpi_get_tmp_recvbuffer, src/smpi/internals/smpi_memory.cpp; Debian's library calls malloc there):
// Open MPI's butterfly reduce-scatter, for one, takes two of the whole vector on every rank, 6.5 GB
// of allocations in a data-parallel ResNet-50 step on 64 simulated ranks. convgrid folds its own
// buffers onto SMPI's shared pages in those modes (src/sim/allocation.hpp), but these are the
// simulator's, private to each rank: the batch x spatial hybrids at 1024 simulated ranks peaked at
// 16.4 GB.
//
// This malloc (preloaded, so every library's malloc comes here) folds a request with
// smpi_shared_malloc when all of these hold:
//  - the simulated rank that makes it is inside a tensor collective: comm/collectives.cpp runs its
//    all-gathers and reduce-scatters in sim::folding_temporaries, which calls
//    convgrid_fold_simulator_temporaries(+1, send bytes, receive bytes) before and (-1, 0, 0)
//    after (leaving the rank's innermost collective), a weak symbol of libconvgrid that only this
//    library defines;
//  - it is 64 KiB or more (src/sim/allocation.hpp's kFoldedBytes) and exactly the collective's
//    send or receive bytes on this rank: the size of a temporary copy of the vector (the
//    butterfly's, recursive halving's, a reduce's, a Bruck all-gather's);
//  - SimGrid's own code calls malloc, not C++'s operator new: its arrays of requests, counts
//    and displacements are new[]'d. (An array of 2 x 4096 requests is 64 KiB, the bytes of a
//    ResNet-50 1x1 layer's 16,384 weights: folded, it crashed the simulator at 4096 ranks.)
// free gives a folded buffer back with smpi_shared_free. Every other request, of every other rank,
// of the simulator itself and in run mode, is glibc's (__libc_malloc, __libc_free), with one
// relaxed load on the way.
//
// With CONVGRID_FOLD_REPORT set, the simulator says at its exit how many buffers were folded
// (tests/smpi/step.sh checks that they were, and that nothing simulated changed).
//
// Why the contents may be lost: in model and comm modes no kernel reads tensor data, so a tensor
// collective's partial sums are never read either. Words, messages and simulated time do not
// depend on what the bytes hold (SMPI charges no time for copying them).
#include <dlfcn.h>

#include <vector>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_set>

#include "sim/allocation.hpp"

extern "C" void* __libc_malloc(std::size_t bytes);
extern "C" void __libc_free(void* p);

namespace {

// Plain atomics, constant-initialised: malloc may run before any constructor of this library.
// Whether some rank is inside a tensor collective, and how many folded buffers are alive.
std::atomic<bool> g_armed{false};
std::atomic<std::size_t> g_folded_alive{0};
std::atomic<std::size_t> g_folded_count{0};
std::atomic<std::size_t> g_folded_bytes{0};

void report_at_exit() {
  std::fprintf(stderr, "folded_collective_temporaries: %zu buffers of SimGrid's collectives folded, %zu bytes\n",
               g_folded_count.load(), g_folded_bytes.load());
}

// SimGrid's functions, looked up in the simulator when a rank first enters a tensor collective:
// this library is preloaded into every program smpirun starts (its shell, too), so it links none.
struct Simgrid {
  using ActorSelf = const void* (*)();
  using SharedMalloc = void* (*)(std::size_t, const char*, int);
  using SharedFree = void (*)(void*);
  ActorSelf actor_self = nullptr;        // sg_actor_self
  SharedMalloc shared_malloc = nullptr;  // smpi_shared_malloc (SMPI_SHARED_MALLOC)
  SharedFree shared_free = nullptr;      // smpi_shared_free (SMPI_SHARED_FREE)

  const void* library = nullptr;          // where libsimgrid is loaded

  bool found() {
    if (actor_self == nullptr) {
      actor_self = reinterpret_cast<ActorSelf>(dlsym(RTLD_DEFAULT, "sg_actor_self"));
      shared_malloc = reinterpret_cast<SharedMalloc>(dlsym(RTLD_DEFAULT, "smpi_shared_malloc"));
      shared_free = reinterpret_cast<SharedFree>(dlsym(RTLD_DEFAULT, "smpi_shared_free"));
      Dl_info info{};
      if (actor_self != nullptr && dladdr(reinterpret_cast<const void*>(actor_self), &info) != 0) {
        library = info.dli_fbase;
      }
    }
    return actor_self != nullptr && shared_malloc != nullptr && shared_free != nullptr && library != nullptr;
  }

  // Whether the code at `address` is libsimgrid's.
  bool owns(const void* address) const {
    Dl_info info{};
    return dladdr(address, &info) != 0 && info.dli_fbase == library;
  }
};

// The byte sizes of one tensor collective's vectors on this rank.
struct Vectors {
  std::size_t send = 0, recv = 0;
  bool match(std::size_t bytes) const { return bytes == send || bytes == recv; }
};

struct Folding {
  // Recursive: the containers below allocate and free while it is held.
  std::recursive_mutex mutex;
  Simgrid simgrid;
  // The tensor collectives each simulated rank (SimGrid actor) is inside, innermost last; ranks
  // inside none are erased, so g_armed is whether any is inside one.
  std::map<const void*, std::vector<Vectors>> inside;
  // The buffers handed out folded.
  std::unordered_set<void*> folded;
};

// Made by the first rank to enter a tensor collective, never destroyed (free may run at exit).
Folding& folding() {
  static Folding* const f = [] {
    if (std::getenv("CONVGRID_FOLD_REPORT") != nullptr) std::atexit(report_at_exit);
    return new Folding;
  }();
  return *f;
}

// Whether `bytes` asked by SimGrid's code at `caller` are a temporary vector of a tensor collective
// of the rank running (above).
bool temporary_vector(Folding& f, std::size_t bytes, const void* caller) {
  {
    std::lock_guard lock(f.mutex);
    const auto rank = f.inside.find(f.simgrid.actor_self());
    if (rank == f.inside.end() || !rank->second.back().match(bytes)) return false;
  }
  return f.simgrid.owns(caller);
}

// SMPI maps folded buffers at page boundaries (huge pages or not); most of what glibc returns is not
// at one.
bool maybe_folded(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 4095) == 0; }

}  // namespace

extern "C" void convgrid_fold_simulator_temporaries(int delta, std::size_t send_bytes, std::size_t recv_bytes) {
  Folding& f = folding();
  std::lock_guard lock(f.mutex);
  if (!f.simgrid.found()) return;  // not inside SimGrid's simulator: nothing is folded
  const void* rank = f.simgrid.actor_self();
  if (delta > 0) {
    f.inside[rank].push_back({send_bytes, recv_bytes});
  } else if (const auto it = f.inside.find(rank); it != f.inside.end()) {
    it->second.pop_back();
    if (it->second.empty()) f.inside.erase(it);
  }
  g_armed.store(!f.inside.empty(), std::memory_order_relaxed);
}

extern "C" void* malloc(std::size_t bytes) {
  if (bytes >= convgrid::sim::kFoldedBytes && g_armed.load(std::memory_order_relaxed)) {
    Folding& f = folding();
    if (temporary_vector(f, bytes, __builtin_return_address(0))) {
      void* p = f.simgrid.shared_malloc(bytes, __FILE__, __LINE__);
      std::lock_guard lock(f.mutex);
      f.folded.insert(p);
      g_folded_alive.fetch_add(1, std::memory_order_relaxed);
      g_folded_count.fetch_add(1, std::memory_order_relaxed);
      g_folded_bytes.fetch_add(bytes, std::memory_order_relaxed);
      return p;
    }
  }
  return __libc_malloc(bytes);
}

extern "C" void free(void* p) {
  if (p != nullptr && g_folded_alive.load(std::memory_order_relaxed) != 0 && maybe_folded(p)) {
    Folding& f = folding();
    bool was_folded = false;
    {
      std::lock_guard lock(f.mutex);
      was_folded = f.folded.erase(p) != 0;
      if (was_folded) g_folded_alive.fetch_sub(1, std::memory_order_relaxed);
    }
    if (was_folded) {
      f.simgrid.shared_free(p);
      return;
    }
  }
  __libc_free(p);
}
