// Half-open index ranges and balanced block partitions: the index arithmetic every distribution
// is made of. Pure; no MPI.
#pragma once

#include <algorithm>
#include <cstdint>

namespace convgrid {

struct Range {
  int64_t begin = 0;
  int64_t end = 0;

  int64_t size() const { return end > begin ? end - begin : 0; }
  bool empty() const { return end <= begin; }
  bool contains(int64_t i) const { return begin <= i && i < end; }
  Range intersect(Range o) const {
    Range r{std::max(begin, o.begin), std::min(end, o.end)};
    if (r.end < r.begin) r.end = r.begin;
    return r;
  }
  Range shifted(int64_t by) const { return {begin + by, end + by}; }
  bool operator==(const Range&) const = default;
};

// Block j of n items split over p parts: sizes differ by at most one, larger blocks first
// (the first n % p blocks have one more item).
inline Range balanced_block(int64_t n, int64_t p, int64_t j) {
  const int64_t q = n / p, r = n % p;
  const int64_t begin = j * q + std::min(j, r);
  return {begin, begin + q + (j < r ? 1 : 0)};
}

}  // namespace convgrid
