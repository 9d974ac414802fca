// Reproducible random tensors that any rank can generate piecewise: the value of element i of
// tensor `stream` is a hash of (seed, stream, i), uniform in [-1, 1). A rank fills its own slice
// without ever holding the whole tensor, and every grid and rank count sees the same numbers.
#pragma once

#include <cstdint>

#include "layout/box.hpp"

namespace convgrid {

// The streams used for a layer's tensors.
enum class TensorStream : uint64_t { input = 1, weights = 2, grad_output = 3, bias = 4 };

float seeded_value(uint64_t seed, TensorStream stream, uint64_t index);

// splitmix64's increment, and its output function for the state x (before the increment: the
// i-th number of the generator started at x0 is splitmix64(x0 + i * kSplitmixGamma)).
inline constexpr uint64_t kSplitmixGamma = 0x9e3779b97f4a7c15ULL;
uint64_t splitmix64(uint64_t x);

// Fills slice storage: element (a,b,c,d) of the slice gets seeded_value at its row-major index in
// the global tensor `global` (a box from the origin).
void fill_seeded(const Slice& slice, const Box4& global, uint64_t seed, TensorStream stream,
                 float* out);

}  // namespace convgrid
