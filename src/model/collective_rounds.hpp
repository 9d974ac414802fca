// Rounds of messages the MPI library's collective algorithms take: the latency term of the cost
// model (profile key "latency": "per_step", model/pass_cost.hpp). One round is one message on
// the critical path, paying the profile's alpha once.
//
// The rules are those of Open MPI 4.1's tuned component (its fixed decision functions), which
// SimGrid's Open MPI selector reproduces (smpi/coll-selector:ompi, platforms/run_flags.sh), so
// the simulated cluster of docs/scale.md runs the algorithms counted here:
//   - blocking all-gather(v) over q ranks: by q and the average bytes per rank,
//       ring q-1 rounds, neighbour exchange q/2 (q even; the ring otherwise), Bruck ceil(log2 q),
//       two-process exchange 1, and "gather + broadcast" 1 + ceil(log2 q) (the binomial
//       broadcast convgrid's runs select);
//   - blocking reduce-scatter (a commutative sum): by q and the bytes of the whole vector
//       (ompi_coll_tuned_reduce_scatter_intra_dec_fixed; SimGrid 3.32's selector has the same
//       table): the ring q-1 rounds; the butterfly (Traff) floor(log2 q) pairwise exchanges,
//       nearest partner first, then a mirror exchange of the results, with a fold before and a
//       return after when q is not a power of two; recursive halving the same exchanges,
//       farthest first, without the mirror; "non-overlapping" a reduce to rank 0 (a tree,
//       ceil(log2 q) rounds) and a scatterv (one);
//   - blocking all-reduce (a commutative sum, max or min): by q and the bytes of the vector
//       (ompi_coll_tuned_allreduce_intra_dec_fixed; SimGrid 3.32's `allreduce__ompi` has the same
//       table): recursive doubling floor(log2 q) exchanges of the whole vector (two more when q
//       is not a power of two); "basic linear" and "non-overlapping", both a reduce to rank 0 and
//       a broadcast from it, counted as two binomial trees of ceil(log2 q) rounds (their shape
//       for the small vectors they are chosen for); the ring and the segmented ring 2(q-1)
//       rounds of a q-th; Rabenseifner's recursive halving then doubling 2 floor(log2 q) rounds
//       (two more when q is not a power of two);
//   - non-blocking all-gather and reduce-scatter (the streamed passes): every member sends to
//       every other at once, one round (Open MPI's libnbc and SMPI both post them linearly);
//   - all-to-all (a redistribution, comm/collectives.hpp): one round of point-to-point messages;
//   - a halo exchange: one round (its messages to every neighbour are posted at once,
//     comm/exchange.hpp).
// Counted words are not affected: each algorithm delivers each rank the same words. What one
// moves beyond them (the fold of the butterfly and of recursive halving when q is not a power
// of two sends a whole vector) is charged to time alone (model/node_links.hpp).
#pragma once

#include <cstdint>

namespace convgrid {

// Open MPI 4.1's blocking all-gather(v) algorithms, and its choice among them for `q` ranks and
// `total_bytes` in all (every member's part), q >= 2. The neighbour exchange of an odd q is the
// ring.
enum class AllGather { gather_broadcast, bruck, ring, neighbour, two_proc };
AllGather all_gather_algorithm(int64_t q, int64_t total_bytes);

// Rounds of a blocking all-gather over `q` ranks of `total_bytes` in all.
int64_t all_gather_rounds(int64_t q, int64_t total_bytes);

// Open MPI 4.1's blocking reduce-scatter algorithms, and its choice among them for `q` ranks and
// `total_bytes` in the whole vector (every member's part).
enum class ReduceScatter { non_overlapping, recursive_halving, ring, butterfly };
ReduceScatter reduce_scatter_algorithm(int64_t q, int64_t total_bytes);

// Rounds of a blocking reduce-scatter over `q` ranks of `total_bytes` in all.
int64_t reduce_scatter_rounds(int64_t q, int64_t total_bytes);

// Open MPI 4.1's blocking all-reduce algorithms for a commutative operation, and its choice among
// them for `q` ranks and a vector of `total_bytes`, q >= 2.
enum class AllReduce { reduce_broadcast, recursive_doubling, ring, rabenseifner };
AllReduce all_reduce_algorithm(int64_t q, int64_t total_bytes);

// Rounds of a non-blocking all-gather or reduce-scatter over `q` ranks.
inline int64_t nonblocking_rounds(int64_t q) { return q > 1 ? 1 : 0; }

// ceil(log2 q) and floor(log2 q) for q >= 1.
int64_t ceil_log2(int64_t q);
int64_t floor_log2(int64_t q);

}  // namespace convgrid
