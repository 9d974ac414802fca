// The smooth activations of PyTorch, one value at a time, and their slopes: sigmoid, tanh,
// Hardsigmoid, Hardswish and SiLU, with PyTorch's formulas and its choices where a slope is not
// defined (Hardsigmoid passes 1/6 strictly inside (-3, 3); Hardswish's slope is x/3 + 1/2 on
// [-3, 3], 0 below and 1 above). The slope is a function of the output where the output
// determines it (sigmoid, tanh, Hardsigmoid: backward needs only y, and the layer may run in
// place), else of the input (Hardswish, SiLU).
#pragma once

#include <algorithm>
#include <cmath>

namespace convgrid {

struct SigmoidFn {
  static constexpr bool kSlopeOfOutput = true;
  static float of(float x) { return 1.0f / (1.0f + std::exp(-x)); }
  static float slope(float y) { return (1.0f - y) * y; }
};

struct TanhFn {
  static constexpr bool kSlopeOfOutput = true;
  static float of(float x) { return std::tanh(x); }
  static float slope(float y) { return 1.0f - y * y; }
};

struct HardsigmoidFn {
  static constexpr bool kSlopeOfOutput = true;
  static float of(float x) { return std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f; }
  static float slope(float y) { return y > 0.0f && y < 1.0f ? 1.0f / 6.0f : 0.0f; }
};

struct HardswishFn {
  static constexpr bool kSlopeOfOutput = false;
  static float of(float x) { return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f; }
  static float slope(float x) { return x < -3.0f ? 0.0f : x <= 3.0f ? x / 3.0f + 0.5f : 1.0f; }
};

struct SiluFn {
  static constexpr bool kSlopeOfOutput = false;
  static float of(float x) { return x / (1.0f + std::exp(-x)); }
  static float slope(float x) {
    const float s = 1.0f / (1.0f + std::exp(-x));
    return s * (1.0f + x * (1.0f - s));
  }
};

}  // namespace convgrid
