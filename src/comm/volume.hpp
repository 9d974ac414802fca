// The logical received volume of each collective, in words, for one rank (SPEC section 6).
// The communication layer counts these at run time and the cost model predicts with them, so
// the two agree exactly. Pure; no MPI. `me` is this rank's index in the communicator.
#pragma once

#include <cstdint>
#include <numeric>
#include <span>

#include "layout/range.hpp"

namespace convgrid {

// All-gather (counts[i] from rank i) and all-to-all (counts[i] received from rank i): the words
// that come from the other ranks; this rank's own part is a local copy.
inline int64_t words_from_others(std::span<const int64_t> counts, int me) {
  return std::accumulate(counts.begin(), counts.end(), int64_t{0}) - counts[me];
}

// Reduce-scatter over q ranks: q-1 contributions to this rank's slice of `own` words.
inline int64_t reduce_scatter_words(int q, int64_t own) { return (q - 1) * own; }

// All-reduce of n words over q ranks: counted as a reduce-scatter of balanced slices
// (balanced_block(n, q, me)) followed by an all-gather of them:
// (q-1)*s + (n-s) with s the size of this rank's slice; 2*(n - n/q) when q divides n.
inline int64_t all_reduce_words(int64_t n, int q, int me) {
  const int64_t s = balanced_block(n, q, me).size();
  return reduce_scatter_words(q, s) + (n - s);
}

// Broadcast of n words: every rank but the root receives them once.
inline int64_t broadcast_words(int64_t n, bool is_root) { return is_root ? 0 : n; }

}  // namespace convgrid
