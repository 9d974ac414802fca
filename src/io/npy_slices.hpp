// Parallel .npy files: each rank reads or writes only its own slice of a 4-D tensor, through
// MPI-IO on the data after the header, so no rank ever holds the whole tensor.
#pragma once

#include <string>

#include "comm/communicator.hpp"
#include "layout/box.hpp"

namespace convgrid {

// Collective over comm. Checks the header on every rank (same error everywhere: an InputError
// naming the file and the wrong shape), then reads this rank's slice into `out` (slice.size()
// floats, flattening order). `global` is the tensor's whole box; `what` names it in errors.
void read_npy_slice(const Communicator& comm, const std::string& path, const Box4& global,
                    const Slice& slice, float* out, const char* what);

// Collective over comm. Rank 0 writes the header; every rank writes its slice. The slices of all
// ranks must cover the tensor exactly once.
void write_npy_slice(const Communicator& comm, const std::string& path, const Box4& global,
                     const Slice& slice, const float* data);

}  // namespace convgrid
