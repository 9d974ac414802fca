// Float collectives over a Communicator, with the traffic accounting of comm/collectives.hpp. The
// all-gathers and reduce-scatters carry tensor data: in SMPI's model mode the simulator's temporaries
// for them are folded (sim::folding_temporaries).
#include "comm/collectives.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "comm/exchange.hpp"
#include "comm/mpi_counts.hpp"
#include "comm/mpi_error.hpp"
#include "comm/volume.hpp"
#include "convgrid/error.hpp"
#include "sim/allocation.hpp"
#include "sim/simulation.hpp"

namespace convgrid {
namespace {

// The tag of all_to_all_v's messages (exchange's are 17).
constexpr int kAllToAllTag = 18;

// Throws unless `buffer` holds exactly `expected` elements.
template <class T>
void check_size(std::span<const T> buffer, int64_t expected, const char* what) {
  if (static_cast<int64_t>(buffer.size()) != expected) {
    throw Error(fmt::format("{} has {} words, expected {}", what, buffer.size(), expected));
  }
}

// The checked int arguments of an all-gather of this rank's `send` into `recv`.
MpiParts all_gather_parts(const Communicator& comm, std::span<const float> send,
                          std::span<float> recv, std::span<const int64_t> counts,
                          std::span<const int64_t> displs) {
  MpiParts parts = to_mpi_parts(counts, displs, comm.size(), recv.size(), "all_gather_v recv");
  check_size(send, counts[comm.rank()], "all_gather_v send");
  return parts;
}

// The checked int counts of a reduce-scatter of `send` into `recv`.
template <class T>
std::vector<int> reduce_scatter_counts(const Communicator& comm, std::span<const T> send,
                                       std::span<T> recv, std::span<const int64_t> counts) {
  std::vector<int> ints = to_mpi_counts(counts, comm.size(), "reduce_scatter");
  check_size(send, std::accumulate(counts.begin(), counts.end(), int64_t{0}),
             "reduce_scatter send");
  check_size(std::span<const T>(recv), counts[comm.rank()], "reduce_scatter recv");
  return ints;
}

// A buffer argument for MPI: never null. An empty span's data() may be null, which SMPI 3.32
// refuses (MPI_ERR_BUFFER) when any rank's count is non-zero, though this rank moves nothing.
template <class T>
T* mpi_buffer(std::span<T> s) {
  static T none[1]{};
  return s.data() != nullptr ? s.data() : const_cast<T*>(none);
}

// An all-gather over a fibre of one rank is a copy: no MPI call. (SimGrid 3.32's Open MPI
// selector picks gather + broadcast for it, and its broadcast sends to rank -1 there.)
bool gathered_alone(const Communicator& comm, std::span<const float> send, std::span<float> recv,
                    std::span<const int64_t> displs) {
  if (comm.size() != 1) return false;
  if (!send.empty()) std::memmove(recv.data() + displs[0], send.data(), send.size_bytes());
  return true;
}

}  // namespace

void all_gather_v(const Communicator& comm, std::span<const float> send, std::span<float> recv,
                  std::span<const int64_t> counts, std::span<const int64_t> displs,
                  TrafficCounter& traffic) {
  MpiParts p = all_gather_parts(comm, send, recv, counts, displs);
  if (gathered_alone(comm, send, recv, displs)) return;
  check_mpi(sim::folding_temporaries(send.size_bytes(), recv.size_bytes(), [&] {
              return MPI_Allgatherv(mpi_buffer(send), p.counts[comm.rank()], MPI_FLOAT, mpi_buffer(recv),
                                    p.counts.data(), p.displs.data(), MPI_FLOAT, comm.raw());
            }),
            "MPI_Allgatherv");
  traffic.collective(CommKind::all_gather, comm.size(), words_from_others(counts, comm.rank()));
}

Request all_gather_v_async(const Communicator& comm, std::span<const float> send,
                           std::span<float> recv, std::span<const int64_t> counts,
                           std::span<const int64_t> displs, TrafficCounter& traffic) {
  MpiParts p = all_gather_parts(comm, send, recv, counts, displs);
  if (gathered_alone(comm, send, recv, displs)) return Request();
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(sim::folding_temporaries(send.size_bytes(), recv.size_bytes(), [&] {
              return MPI_Iallgatherv(mpi_buffer(send), p.counts[comm.rank()], MPI_FLOAT, mpi_buffer(recv),
                                     p.counts.data(), p.displs.data(), MPI_FLOAT, comm.raw(), &request);
            }),
            "MPI_Iallgatherv");
  traffic.collective(CommKind::all_gather, comm.size(), words_from_others(counts, comm.rank()));
  return Request(request, "MPI_Iallgatherv", std::move(p));
}

namespace {

// The sum reduced to rank 0, then scattered: Open MPI's "non-overlapping" reduce-scatter, which
// the SMPI build runs where a count is zero (sim/simulation.hpp, point 10).
template <class T>
void reduce_then_scatter(const Communicator& comm, std::span<const T> send, std::span<T> recv,
                         const std::vector<int>& ints, MPI_Datatype type) {
  std::vector<int> displs(ints.size(), 0);
  for (size_t i = 1; i < ints.size(); ++i) displs[i] = displs[i - 1] + ints[i - 1];
  std::vector<T> sum(comm.rank() == 0 ? send.size() : 0);
  check_mpi(sim::folding_temporaries(send.size_bytes(), sum.size() * sizeof(T), [&] {
              return MPI_Reduce(mpi_buffer(send), mpi_buffer(std::span<T>(sum)), static_cast<int>(send.size()),
                                type, MPI_SUM, 0, comm.raw());
            }),
            "MPI_Reduce");
  check_mpi(sim::folding_temporaries(sum.size() * sizeof(T), recv.size_bytes(), [&] {
              return MPI_Scatterv(mpi_buffer(std::span<const T>(sum)), ints.data(), displs.data(), type,
                                  mpi_buffer(recv), ints[comm.rank()], type, 0, comm.raw());
            }),
            "MPI_Scatterv");
}

// MPI_Reduce_scatter of T (MPI type `type`, `words` words per element).
template <class T>
void reduce_scatter_of(const Communicator& comm, std::span<const T> send, std::span<T> recv,
                       std::span<const int64_t> counts, MPI_Datatype type, int64_t words,
                       TrafficCounter& traffic) {
  std::vector<int> ints = reduce_scatter_counts(comm, send, recv, counts);
  if (send.empty()) {
    // Every count is zero: nothing to reduce, no MPI call (SimGrid's reduce divides by the count).
  } else if (sim::kSimulated && std::find(ints.begin(), ints.end(), 0) != ints.end()) {
    reduce_then_scatter(comm, send, recv, ints, type);
  } else {
    check_mpi(sim::folding_temporaries(send.size_bytes(), recv.size_bytes(), [&] {
                return MPI_Reduce_scatter(mpi_buffer(send), mpi_buffer(recv), ints.data(), type, MPI_SUM, comm.raw());
              }),
              "MPI_Reduce_scatter");
  }
  traffic.collective(CommKind::reduce_scatter, comm.size(),
                     words * reduce_scatter_words(comm.size(), counts[comm.rank()]));
}

}  // namespace

void reduce_scatter(const Communicator& comm, std::span<const float> send, std::span<float> recv,
                    std::span<const int64_t> counts, TrafficCounter& traffic) {
  reduce_scatter_of(comm, send, recv, counts, MPI_FLOAT, 1, traffic);
}

void reduce_scatter(const Communicator& comm, std::span<const double> send, std::span<double> recv,
                    std::span<const int64_t> counts, TrafficCounter& traffic) {
  reduce_scatter_of(comm, send, recv, counts, MPI_DOUBLE, 2, traffic);
}

Request reduce_scatter_async(const Communicator& comm, std::span<const float> send,
                             std::span<float> recv, std::span<const int64_t> counts,
                             TrafficCounter& traffic) {
  std::vector<int> ints = reduce_scatter_counts(comm, send, recv, counts);
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(sim::folding_temporaries(send.size_bytes(), recv.size_bytes(), [&] {
              return MPI_Ireduce_scatter(mpi_buffer(send), mpi_buffer(recv), ints.data(), MPI_FLOAT, MPI_SUM,
                                         comm.raw(), &request);
            }),
            "MPI_Ireduce_scatter");
  traffic.collective(CommKind::reduce_scatter, comm.size(),
                     reduce_scatter_words(comm.size(), counts[comm.rank()]));
  return Request(request, "MPI_Ireduce_scatter", MpiParts{std::move(ints), {}});
}

void all_to_all_v(const Communicator& comm, std::span<const float> send,
                  std::span<const int64_t> send_counts, std::span<const int64_t> send_displs,
                  std::span<float> recv, std::span<const int64_t> recv_counts,
                  std::span<const int64_t> recv_displs, TrafficCounter& traffic) {
  const MpiParts s =
      to_mpi_parts(send_counts, send_displs, comm.size(), send.size(), "all_to_all_v send");
  const MpiParts r =
      to_mpi_parts(recv_counts, recv_displs, comm.size(), recv.size(), "all_to_all_v recv");
  const int me = comm.rank();
  if (s.counts[me] != r.counts[me]) {
    throw Error(fmt::format("all_to_all_v: rank {} sends itself {} words but expects {}", me,
                            s.counts[me], r.counts[me]));
  }
  if (s.counts[me] > 0) {
    std::memmove(recv.data() + r.displs[me], send.data() + s.displs[me],
                 static_cast<size_t>(s.counts[me]) * sizeof(float));
  }
  std::vector<SendMessage> sends;
  std::vector<RecvMessage> recvs;
  for (int i = 0; i < comm.size(); ++i) {
    if (i == me) continue;
    if (s.counts[i] > 0) sends.push_back({i, send.data() + s.displs[i], s.counts[i]});
    if (r.counts[i] > 0) recvs.push_back({i, recv.data() + r.displs[i], r.counts[i]});
  }
  exchange_uncounted(comm, sends, recvs, kAllToAllTag);
  traffic.collective(CommKind::all_to_all, comm.size(),
                     words_from_others(recv_counts, comm.rank()));
}

namespace {

// MPI_Allreduce, but for one of nothing under SMPI: SimGrid 3.32's Open MPI selector sends a
// zero-count all-reduce to its segmented reduce, which divides by the count (SIGFPE; a batch norm
// over a concat's empty channel block on 16 simulated ranks). Every member passes the same count,
// so all of them skip it; the traffic is counted as for the collective MPI would run.
void all_reduce_in_place(const Communicator& comm, void* data, int count, MPI_Datatype type, MPI_Op op) {
  if (sim::kSimulated && count == 0) return;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, data, count, type, op, comm.raw()), "MPI_Allreduce");
}

void all_reduce(const Communicator& comm, std::span<float> data, MPI_Op op, TrafficCounter& traffic) {
  const int count = to_mpi_count(static_cast<int64_t>(data.size()), "all_reduce count");
  all_reduce_in_place(comm, data.data(), count, MPI_FLOAT, op);
  traffic.collective(CommKind::all_reduce, comm.size(),
                     all_reduce_words(count, comm.size(), comm.rank()));
}

}  // namespace

void all_reduce_sum(const Communicator& comm, std::span<float> data, TrafficCounter& traffic) {
  all_reduce(comm, data, MPI_SUM, traffic);
}

void all_reduce_sum(const Communicator& comm, std::span<double> data, TrafficCounter& traffic) {
  const int count = to_mpi_count(static_cast<int64_t>(data.size()), "all_reduce count");
  all_reduce_in_place(comm, data.data(), count, MPI_DOUBLE, MPI_SUM);
  traffic.collective(CommKind::all_reduce, comm.size(),
                     2 * all_reduce_words(count, comm.size(), comm.rank()));
}

void all_reduce_max(const Communicator& comm, std::span<float> data, TrafficCounter& traffic) {
  all_reduce(comm, data, MPI_MAX, traffic);
}

void all_reduce_min(const Communicator& comm, std::span<float> data, TrafficCounter& traffic) {
  all_reduce(comm, data, MPI_MIN, traffic);
}

void broadcast(const Communicator& comm, std::span<float> data, int root, TrafficCounter& traffic) {
  const int count = to_mpi_count(static_cast<int64_t>(data.size()), "broadcast count");
  if (root < 0 || root >= comm.size()) {
    throw Error(
        fmt::format("broadcast: root {} is not a rank of a communicator of {}", root, comm.size()));
  }
  check_mpi(MPI_Bcast(data.data(), count, MPI_FLOAT, root, comm.raw()), "MPI_Bcast");
  traffic.collective(CommKind::broadcast, comm.size(), broadcast_words(count, comm.rank() == root));
}

}  // namespace convgrid
