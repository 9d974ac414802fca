// Helpers of the MPI tests: seeded random tensors and a rank's slice of a whole tensor.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "convgrid/grid_dims.hpp"
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

// The grids a sweep visits: every grid of P ranks, or, with CONVGRID_TEST_GRID_SAMPLE=N in the
// environment, N of them drawn with a fixed seed (the same on every rank and every run) plus
// the first and the last, for sweeps too long to run whole under a simulator in CI.
inline std::vector<GridDims> sweep_grids(int64_t P) {
  std::vector<GridDims> grids = all_grids(P);
  const char* sample = std::getenv("CONVGRID_TEST_GRID_SAMPLE");
  if (sample == nullptr) return grids;
  const size_t n = static_cast<size_t>(std::max(0L, std::stol(sample)));
  if (grids.size() <= n + 2) return grids;
  std::vector<GridDims> middle(grids.begin() + 1, grids.end() - 1), drawn;
  std::sample(middle.begin(), middle.end(), std::back_inserter(drawn), n, std::mt19937(7));
  drawn.insert(drawn.begin(), grids.front());
  drawn.push_back(grids.back());
  return drawn;
}

}  // namespace convgrid::test_data
