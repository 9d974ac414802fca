// Helpers of the MPI tests: seeded random tensors and a rank's slice of a whole tensor.
#pragma once

#include <random>
#include <vector>

#include "layout/pack.hpp"

namespace convgrid::test_data {

inline std::vector<float> random_tensor(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// The elements of slice `s` of the whole tensor `t` (stored as the box `global`), in slice order.
inline std::vector<float> slice_of(const Slice& s, const Box4& global, const std::vector<float>& t) {
  std::vector<float> out(s.size());
  pack_box(s, nullptr, global, t.data(), out.data());
  return out;
}

}  // namespace convgrid::test_data
