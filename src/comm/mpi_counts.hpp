// Element counts and displacements as MPI takes them: int, since Open MPI 4.1 has no large-count
// calls. The API of the communication layer is int64; these checks turn a count that does not fit,
// or a part that lies outside its buffer, into a convgrid::Error before MPI is called.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace convgrid {

// n as an int; throws Error naming `what` when n < 0 or n > INT_MAX.
int to_mpi_count(int64_t n, std::string_view what);

// Counts and displacements of one part per rank, converted to int.
struct MpiParts {
  std::vector<int> counts;
  std::vector<int> displs;
};

// Checks that counts and displs have one entry per rank (`ranks`), that every count and
// displacement fits in int, and that part i, [displs[i], displs[i] + counts[i]), lies inside a
// buffer of `buffer_size` elements; `what` names the buffer in the error ("all_gather_v recv").
MpiParts to_mpi_parts(std::span<const int64_t> counts, std::span<const int64_t> displs, int ranks,
                      std::size_t buffer_size, std::string_view what);

// Counts of one part per rank, converted to int (for calls whose parts are contiguous).
std::vector<int> to_mpi_counts(std::span<const int64_t> counts, int ranks, std::string_view what);

}  // namespace convgrid
