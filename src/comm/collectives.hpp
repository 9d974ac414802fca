// Float collectives over a Communicator, each adding what this rank received into a
// TrafficCounter (message rule in comm/traffic.hpp, volume rules in comm/volume.hpp):
//
//   all_gather_v    counts as all_gather:     the other ranks' parts, sum of counts[i], i != me
//   reduce_scatter  counts as reduce_scatter: (q-1) * counts[me]
//   all_to_all_v    counts as all_to_all:     sum of recv_counts[i], i != me
//   all_reduce_sum  counts as all_reduce:     (q-1)*s + (n-s), s = balanced_block(n, q, me).size()
//   broadcast       counts as broadcast:      n on every rank but the root
//
// Counts are int64 here; each must fit in an int (MPI's count type), else convgrid::Error is
// thrown before MPI is called, as it is for count arrays that do not have one entry per rank or
// parts that lie outside their buffer. On a communicator of one rank every call is a local copy
// and counts nothing. Send and receive buffers must not overlap.
#pragma once

#include <cstdint>
#include <span>

#include "comm/communicator.hpp"
#include "comm/request.hpp"
#include "comm/traffic.hpp"

namespace convgrid {

// MPI_Allgatherv: rank i's `send` (counts[i] words) lands at recv[displs[i] ...] on every rank.
void all_gather_v(const Communicator& comm, std::span<const float> send, std::span<float> recv,
                  std::span<const int64_t> counts, std::span<const int64_t> displs,
                  TrafficCounter& traffic);
// The same, non-blocking (MPI_Iallgatherv); the buffers must live until the request completes.
Request all_gather_v_async(const Communicator& comm, std::span<const float> send,
                           std::span<float> recv, std::span<const int64_t> counts,
                           std::span<const int64_t> displs, TrafficCounter& traffic);

// MPI_Reduce_scatter with MPI_SUM: `send` holds sum(counts) words laid out rank after rank; rank i
// receives in `recv` (counts[i] words) the sum over all ranks of their i-th part.
void reduce_scatter(const Communicator& comm, std::span<const float> send, std::span<float> recv,
                    std::span<const int64_t> counts, TrafficCounter& traffic);
// The same, non-blocking (MPI_Ireduce_scatter); the buffers must live until the request completes.
Request reduce_scatter_async(const Communicator& comm, std::span<const float> send,
                             std::span<float> recv, std::span<const int64_t> counts,
                             TrafficCounter& traffic);

// The same in double precision (the sums of reproducible training): a double counts as two words.
void reduce_scatter(const Communicator& comm, std::span<const double> send, std::span<double> recv,
                    std::span<const int64_t> counts, TrafficCounter& traffic);

// The all-to-all of MPI_Alltoallv: send[send_displs[i] ...] (send_counts[i] words) goes to rank
// i, and what rank i sends here lands at recv[recv_displs[i] ...] (recv_counts[i] words). It is
// one round of point-to-point messages between the pairs that exchange words, all posted at once:
// MPI_Alltoallv in Open MPI and SMPI sends a message to every rank, empty or not, P^2 messages
// where a redistribution between two layers' grids usually pairs each rank with a few. Throws
// convgrid::Error when this rank's part for itself differs in size between send and recv.
void all_to_all_v(const Communicator& comm, std::span<const float> send,
                  std::span<const int64_t> send_counts, std::span<const int64_t> send_displs,
                  std::span<float> recv, std::span<const int64_t> recv_counts,
                  std::span<const int64_t> recv_displs, TrafficCounter& traffic);

// MPI_Allreduce with MPI_SUM, in place: every rank ends with the element-wise sum of `data`.
void all_reduce_sum(const Communicator& comm, std::span<float> data, TrafficCounter& traffic);
// The same in double precision: a double counts as two words.
void all_reduce_sum(const Communicator& comm, std::span<double> data, TrafficCounter& traffic);
// The same with MPI_MAX and MPI_MIN (counted like all_reduce_sum).
void all_reduce_max(const Communicator& comm, std::span<float> data, TrafficCounter& traffic);
void all_reduce_min(const Communicator& comm, std::span<float> data, TrafficCounter& traffic);

// MPI_Bcast: every rank ends with the root's `data` (same size on every rank).
void broadcast(const Communicator& comm, std::span<float> data, int root, TrafficCounter& traffic);

}  // namespace convgrid
