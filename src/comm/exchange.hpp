// Point-to-point exchange (halo exchange and its reverse): counts as point_to_point, one message
// and `count` words per non-empty receive (comm/traffic.hpp).
#pragma once

#include <cstdint>
#include <span>

#include "comm/communicator.hpp"
#include "comm/traffic.hpp"

namespace convgrid {

// One message: `count` floats at `data`, to or from rank `peer` of the communicator.
template <class T>
struct Message {
  int peer = 0;
  T* data = nullptr;
  int64_t count = 0;
};
using SendMessage = Message<const float>;
using RecvMessage = Message<float>;

// Posts every non-empty receive (MPI_Irecv), then every non-empty send (MPI_Isend), and waits for
// all. Messages with count 0 are skipped on both sides: they are neither posted nor counted, so
// a peer need not send a message its receiver lists as empty. Several messages between the same
// two ranks are matched in the order they appear in `sends` and in `recvs`. Each count must fit
// in an int; buffers must not overlap.
void exchange(const Communicator& comm, std::span<const SendMessage> sends,
              std::span<const RecvMessage> recvs, TrafficCounter& traffic);

// The same messages with tag `tag`, counting nothing: for a collective built from them
// (all_to_all_v), which counts itself.
void exchange_uncounted(const Communicator& comm, std::span<const SendMessage> sends,
                        std::span<const RecvMessage> recvs, int tag);

}  // namespace convgrid
