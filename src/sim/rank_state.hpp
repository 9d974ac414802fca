// The state one MPI rank keeps for its whole life: memory counters, pending requests, the compute
// mode. One per rank in both builds: a process global under Open MPI (a rank is a process), SMPI's
// per-rank user data under the SMPI build (every rank is a context of one process, and the
// library is loaded once for all of them).
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

namespace convgrid {
class MemoryScope;
}

namespace convgrid::sim {

enum class ComputeMode { run, model, comm };

struct RankState {
  // Bytes of every tracked allocation alive, and their peak (memory/memory.cpp). Atomic: kernel
  // threads may allocate.
  std::atomic<int64_t> current_bytes{0};
  std::atomic<int64_t> peak_bytes{0};
  // The limit on current_bytes (none: unlimited), and the innermost MemoryScope open on the rank
  // (each links to the one it is inside): set by the rank's thread, read by its kernel threads.
  std::optional<int64_t> memory_limit;
  const MemoryScope* memory_scope = nullptr;
  // Non-blocking operations posted and not completed (comm/request.hpp).
  int64_t outstanding_requests = 0;
  ComputeMode compute = ComputeMode::run;
  // SMPI build: whether this rank has said that it started a timed phase late (phase_start.cpp).
  bool late_start_reported = false;
};

// This rank's state, created on first use.
RankState& rank_state();

}  // namespace convgrid::sim
