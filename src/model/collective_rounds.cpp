// Open MPI 4.1's choice of all-gather and reduce-scatter algorithms and their rounds (see
// collective_rounds.hpp).
#include "model/collective_rounds.hpp"

namespace convgrid {
namespace {

// Open MPI 4.1 coll/tuned's fixed decision for MPI_Allgatherv, by communicator size and the
// average bytes per rank (ompi_coll_tuned_allgatherv_intra_dec_fixed).
AllGather choose(int64_t q, int64_t b) {
  using G = AllGather;
  if (q == 2) return G::two_proc;  // the ring or the two-process exchange: one round either way
  if (q < 8) {
    if (b < 256) return G::gather_broadcast;
    if (b < 4096) return G::neighbour;
    if (b < 8192) return G::ring;
    if (b < 16384) return G::neighbour;
    return b < 262144 ? G::bruck : G::neighbour;
  }
  if (q < 16) return b < 1024 ? G::gather_broadcast : G::bruck;
  if (q < 32) return b < 128 ? G::gather_broadcast : b < 262144 ? G::bruck : G::ring;
  if (q < 64) return b < 256 ? G::gather_broadcast : b < 8192 ? G::bruck : G::ring;
  if (q < 128) return b < 256 ? G::gather_broadcast : b < 4096 ? G::bruck : G::ring;
  if (q < 256) return b < 1024 ? G::bruck : b < 65536 ? G::neighbour : G::ring;
  if (q < 512) return b < 1024 ? G::bruck : G::ring;
  if (q < 1024) {
    if (b < 512) return G::bruck;
    if (b < 1024) return G::gather_broadcast;
    if (b < 4096) return G::bruck;
    return b < 1048576 ? G::neighbour : G::ring;
  }
  return b < 4096 ? G::bruck : G::neighbour;
}

}  // namespace

int64_t ceil_log2(int64_t q) {
  int64_t r = 0;
  while ((int64_t{1} << r) < q) ++r;
  return r;
}

int64_t floor_log2(int64_t q) {
  int64_t r = 0;
  while ((int64_t{2} << r) <= q) ++r;
  return r;
}

ReduceScatter reduce_scatter_algorithm(int64_t q, int64_t total_bytes) {
  using A = ReduceScatter;
  const int64_t b = total_bytes;
  if (q < 4) return b >= 65536 && b < 131072 ? A::butterfly : A::ring;
  if (q < 8) return b < 8 ? A::non_overlapping : b < 262144 ? A::recursive_halving : A::ring;
  if (q < 32) return b < 262144 ? A::recursive_halving : A::ring;
  if (q < 64) {
    if (b < 64) return A::non_overlapping;
    if (b < 2048) return A::recursive_halving;
    return b < 524288 ? A::butterfly : A::ring;
  }
  if (q < 128) {
    if (b < 256) return A::non_overlapping;
    if (b < 512) return A::recursive_halving;
    if (b < 2048) return A::butterfly;
    return b < 4096 ? A::recursive_halving : A::butterfly;
  }
  if (q < 256) return b < 256 ? A::non_overlapping : b < 512 ? A::recursive_halving : A::butterfly;
  if (q < 512) return b < 256 ? A::non_overlapping : b < 1024 ? A::recursive_halving : A::butterfly;
  if (q < 1024) {
    if (b < 512) return A::non_overlapping;
    if (b < 2048) return A::recursive_halving;
    if (b < 8192) return A::butterfly;
    return b < 16384 ? A::recursive_halving : A::butterfly;
  }
  if (q < 2048) {
    if (b < 512) return A::non_overlapping;
    if (b < 4096) return A::recursive_halving;
    if (b < 16384) return A::butterfly;
    return b < 32768 ? A::recursive_halving : A::butterfly;
  }
  if (q < 4096) return b < 512 ? A::non_overlapping : b < 4096 ? A::recursive_halving : A::butterfly;
  return b < 1024 ? A::non_overlapping : b < 8192 ? A::recursive_halving : A::butterfly;
}

int64_t reduce_scatter_rounds(int64_t q, int64_t total_bytes) {
  if (q <= 1) return 0;
  const int64_t lg = floor_log2(q);
  const bool folded = (int64_t{1} << lg) != q;  // a fold before the exchanges and a return after
  switch (reduce_scatter_algorithm(q, total_bytes)) {
    case ReduceScatter::non_overlapping:
      return ceil_log2(q) + 1;
    case ReduceScatter::recursive_halving:
      return lg + (folded ? 2 : 0);
    case ReduceScatter::butterfly:
      // The mirror exchange is the identity over 2 ranks; the excluded ranks of a fold receive
      // their results in it.
      return lg + (folded ? 1 : 0) + (lg >= 2 || folded ? 1 : 0);
    case ReduceScatter::ring:
      break;
  }
  return q - 1;
}

AllGather all_gather_algorithm(int64_t q, int64_t total_bytes) {
  const AllGather a = choose(q, total_bytes / q);
  return a == AllGather::neighbour && q % 2 != 0 ? AllGather::ring : a;
}

int64_t all_gather_rounds(int64_t q, int64_t total_bytes) {
  if (q <= 1) return 0;
  switch (all_gather_algorithm(q, total_bytes)) {
    case AllGather::gather_broadcast:
      return 1 + ceil_log2(q);
    case AllGather::bruck:
      return ceil_log2(q);
    case AllGather::neighbour:
      return q / 2;
    case AllGather::two_proc:
      return 1;
    case AllGather::ring:
      break;
  }
  return q - 1;
}

AllReduce all_reduce_algorithm(int64_t q, int64_t total_bytes) {
  using A = AllReduce;
  const int64_t b = total_bytes;
  // Open MPI's numbers: 1 basic linear and 2 non-overlapping (both a reduce and a broadcast), 3
  // recursive doubling, 4 ring, 5 segmented ring, 6 Rabenseifner.
  const auto alg = [&]() -> int {
    if (q < 4) {
      if (b < 8) return 4;
      if (b < 4096) return 3;
      if (b < 8192) return 4;
      if (b < 16384) return 3;
      if (b < 65536) return 4;
      return b < 262144 ? 5 : 6;
    }
    if (q < 8) return b < 16 ? 4 : b < 8192 ? 3 : 6;
    if (q < 16) return b < 8192 ? 3 : 6;
    if (q < 32) return b < 64 ? 5 : b < 4096 ? 3 : 6;
    if (q < 64) return b < 128 ? 5 : 6;
    if (q < 128) return b < 262144 ? 3 : 6;
    if (q < 256) return b < 131072 ? 2 : b < 262144 ? 3 : 6;
    if (q < 512) return b < 4096 ? 2 : 6;
    if (q < 2048) return b < 2048 ? 2 : b < 16384 ? 3 : 6;
    if (q < 4096) return b < 2048 ? 2 : b < 4096 ? 5 : b < 16384 ? 3 : 6;
    return b < 2048 ? 2 : b < 16384 ? 5 : b < 32768 ? 3 : 6;
  }();
  switch (alg) {
    case 1:
    case 2:
      return A::reduce_broadcast;
    case 3:
      return A::recursive_doubling;
    case 4:
    case 5:
      return A::ring;
    default:
      return A::rabenseifner;
  }
}

}  // namespace convgrid
