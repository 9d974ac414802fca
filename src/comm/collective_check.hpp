// Agreeing on an error across a communicator, so that a failure seen by some ranks (a bad file
// region, a failed allocation) ends the whole job with one message instead of a hang.
// Collective; counts no traffic (it is control, not data).
#pragma once

#include <string>

#include "comm/communicator.hpp"

namespace convgrid {

// Every rank passes whether it succeeded. If any rank failed, every rank throws
// convgrid::InputError carrying the `message` of the lowest failing rank; otherwise returns.
// The messages of ranks that succeeded are ignored.
void collective_check(const Communicator& comm, bool ok, const std::string& message);

}  // namespace convgrid
