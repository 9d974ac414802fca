// Open MPI 4.1's choice of all-gather algorithm and its rounds (see collective_rounds.hpp).
#include "model/collective_rounds.hpp"

namespace convgrid {
namespace {

enum class Gather { gather_broadcast, bruck, ring, neighbour, two_proc };

// Open MPI 4.1 coll/tuned's fixed decision for MPI_Allgatherv, by communicator size and the
// average bytes per rank (ompi_coll_tuned_allgatherv_intra_dec_fixed).
Gather choose(int64_t q, int64_t b) {
  using G = Gather;
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

int64_t all_gather_rounds(int64_t q, int64_t total_bytes) {
  if (q <= 1) return 0;
  switch (choose(q, total_bytes / q)) {
    case Gather::gather_broadcast:
      return 1 + ceil_log2(q);
    case Gather::bruck:
      return ceil_log2(q);
    case Gather::neighbour:
      return q % 2 == 0 ? q / 2 : q - 1;
    case Gather::two_proc:
      return 1;
    case Gather::ring:
      break;
  }
  return q - 1;
}

}  // namespace convgrid
