// Point-to-point exchange: all receives posted before any send, then one wait for all.
// Under SMPI the sends are synchronous (sim::kSendsSynchronous, sim/simulation.hpp).
#include "comm/exchange.hpp"

#include <vector>

#include <fmt/format.h>

#include "comm/mpi_counts.hpp"
#include "comm/mpi_error.hpp"
#include "convgrid/error.hpp"
#include "sim/simulation.hpp"

namespace convgrid {
namespace {

constexpr int kExchangeTag = 17;

// The int counts of `messages`; throws before anything is posted when a count does not fit in
// an int or a non-empty message names a peer outside the communicator.
template <class T>
std::vector<int> checked_counts(const Communicator& comm, std::span<const Message<T>> messages,
                                const char* what) {
  std::vector<int> counts;
  counts.reserve(messages.size());
  for (const Message<T>& m : messages) {
    counts.push_back(to_mpi_count(m.count, fmt::format("exchange: {} count", what)));
    if (counts.back() > 0 && (m.peer < 0 || m.peer >= comm.size())) {
      throw Error(fmt::format("exchange: {} peer {} is not a rank of a communicator of {}", what,
                              m.peer, comm.size()));
    }
  }
  return counts;
}

// Posts `post` (MPI_Irecv or MPI_Isend) for every non-empty message, appending its request.
template <class T, class Post>
void post_all(const Communicator& comm, std::span<const Message<T>> messages,
              const std::vector<int>& counts, Post post, const char* call, int tag,
              std::vector<MPI_Request>& requests) {
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (counts[i] == 0) continue;
    requests.push_back(MPI_REQUEST_NULL);
    check_mpi(post(messages[i].data, counts[i], MPI_FLOAT, messages[i].peer, tag,
                   comm.raw(), &requests.back()),
              call);
  }
}

}  // namespace

void exchange_uncounted(const Communicator& comm, std::span<const SendMessage> sends,
                        std::span<const RecvMessage> recvs, int tag) {
  const std::vector<int> recv_counts = checked_counts(comm, recvs, "receive");
  const std::vector<int> send_counts = checked_counts(comm, sends, "send");
  std::vector<MPI_Request> requests;
  requests.reserve(sends.size() + recvs.size());
  post_all(comm, recvs, recv_counts, MPI_Irecv, "MPI_Irecv", tag, requests);
  if constexpr (sim::kSendsSynchronous) {
    post_all(comm, sends, send_counts, MPI_Issend, "MPI_Issend", tag, requests);
  } else {
    post_all(comm, sends, send_counts, MPI_Isend, "MPI_Isend", tag, requests);
  }
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
}

void exchange(const Communicator& comm, std::span<const SendMessage> sends,
              std::span<const RecvMessage> recvs, TrafficCounter& traffic) {
  exchange_uncounted(comm, sends, recvs, kExchangeTag);
  for (const RecvMessage& m : recvs) traffic.receive(m.count);
}

}  // namespace convgrid
