// Small helpers the grid algorithms (grid_conv, streamed_conv) share for their working buffers:
// growing a tracked buffer, the displacements of a collective's counts, spans over raw blocks,
// and MPI's clock.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "convgrid/memory.hpp"

namespace convgrid::pass_buffers {

// Grows `b` to at least n elements (allocates only when it is too small, freeing the old buffer
// first, so that the peak of the tracked bytes is the sum of the final sizes, as modelled).
inline float* ensure(Buffer& b, int64_t n) {
  if (b.size() < n) {
    b = Buffer();
    b = Buffer(n);
  }
  return b.data();
}

inline int64_t total(const std::vector<int64_t>& counts) {
  return std::accumulate(counts.begin(), counts.end(), int64_t{0});
}

// Exclusive prefix sums: where each of `counts` starts in one buffer.
inline std::vector<int64_t> displacements(const std::vector<int64_t>& counts) {
  std::vector<int64_t> d(counts.size(), 0);
  for (size_t i = 1; i < counts.size(); ++i) d[i] = d[i - 1] + counts[i - 1];
  return d;
}

inline std::span<const float> cspan(const float* p, int64_t n) { return {p, static_cast<size_t>(n)}; }
inline std::span<float> mspan(float* p, int64_t n) { return {p, static_cast<size_t>(n)}; }

// MPI's clock: wall time under Open MPI, simulated time under SMPI.
inline double now() { return MPI_Wtime(); }

}  // namespace convgrid::pass_buffers
