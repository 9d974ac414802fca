// Checks and int conversions of counts and displacements for MPI calls.
#include "comm/mpi_counts.hpp"

#include <climits>

#include <fmt/format.h>

#include "convgrid/error.hpp"

namespace convgrid {

int to_mpi_count(int64_t n, std::string_view what) {
  if (n < 0 || n > INT_MAX) {
    throw Error(
        fmt::format("{} is {}: MPI takes counts from 0 to {} (Open MPI 4.1 has no "
                    "large-count calls)",
                    what, n, INT_MAX));
  }
  return static_cast<int>(n);
}

std::vector<int> to_mpi_counts(std::span<const int64_t> counts, int ranks, std::string_view what) {
  if (counts.size() != static_cast<std::size_t>(ranks)) {
    throw Error(fmt::format("{}: {} counts for {} ranks", what, counts.size(), ranks));
  }
  std::vector<int> out(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    out[i] = to_mpi_count(counts[i], fmt::format("{} count of rank {}", what, i));
  }
  return out;
}

MpiParts to_mpi_parts(std::span<const int64_t> counts, std::span<const int64_t> displs, int ranks,
                      std::size_t buffer_size, std::string_view what) {
  MpiParts parts{to_mpi_counts(counts, ranks, what), {}};
  if (displs.size() != counts.size()) {
    throw Error(fmt::format("{}: {} displacements for {} ranks", what, displs.size(), ranks));
  }
  parts.displs.resize(displs.size());
  for (std::size_t i = 0; i < displs.size(); ++i) {
    parts.displs[i] = to_mpi_count(displs[i], fmt::format("{} displacement of rank {}", what, i));
    if (static_cast<std::size_t>(displs[i] + counts[i]) > buffer_size) {
      throw Error(fmt::format("{}: part of rank {} [{}, {}) lies outside the buffer of {}", what, i,
                              displs[i], displs[i] + counts[i], buffer_size));
    }
  }
  return parts;
}

}  // namespace convgrid
