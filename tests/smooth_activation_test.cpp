// Tests of the smooth activations (train/smooth_activations.hpp): each function against its
// formula in double, each slope against a central difference of that formula away from the kinks,
// PyTorch's choices at Hardsigmoid's and Hardswish's kinks (x = -3 and 3), and the training layers
// on one rank: in place (the input's sole reader) exactly where the slope is a function of the
// output, into buffers of their own otherwise, backward adding into what another reader left.
#include "train/smooth_activations.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "comm/communicator.hpp"
#include "nn/network.hpp"
#include "one_element_wise_layer.hpp"
#include "one_rank_mpi.hpp"

namespace convgrid {
namespace {

using Floats = std::vector<float>;
using test_layers::OneLayer;

double relu6(double x) { return std::min(std::max(x, 0.0), 6.0); }

struct Case {
  LayerKind kind;
  std::function<float(float)> of, slope;  // the per-value functions under test
  bool slope_of_output;
  std::function<double(double)> formula;  // in double
};

template <class F>
Case case_of(LayerKind kind, std::function<double(double)> formula) {
  return {kind, F::of, F::slope, F::kSlopeOfOutput, std::move(formula)};
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      case_of<SigmoidFn>(LayerKind::sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }),
      case_of<TanhFn>(LayerKind::tanh, [](double x) { return std::tanh(x); }),
      case_of<HardsigmoidFn>(LayerKind::hardsigmoid, [](double x) { return relu6(x + 3) / 6; }),
      case_of<HardswishFn>(LayerKind::hardswish, [](double x) { return x * relu6(x + 3) / 6; }),
      case_of<SiluFn>(LayerKind::silu, [](double x) { return x / (1 + std::exp(-x)); }),
  };
  return all;
}

// -6 .. 6 in steps of 0.37, which misses the kinks at -3 and 3 by at least 0.03.
std::vector<double> points() {
  std::vector<double> x;
  for (double v = -6.0; v <= 6.0; v += 0.37) x.push_back(v);
  return x;
}

TEST(SmoothActivations, ValuesAndSlopesMatchTheirFormulas) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(to_string(c.kind));
    for (double x : points()) {
      const float xf = static_cast<float>(x);
      const float y = c.of(xf);
      EXPECT_NEAR(y, c.formula(xf), 1e-6 * (1 + std::abs(c.formula(xf)))) << x;
      const double h = 1e-4;
      const double slope = (c.formula(xf + h) - c.formula(xf - h)) / (2 * h);
      EXPECT_NEAR(c.slope(c.slope_of_output ? y : xf), slope, 1e-5) << x;
    }
  }
}

// PyTorch's backward at the kinks: hardsigmoid_backward passes 1/6 only for -3 < x < 3;
// hardswish_backward gives x/3 + 1/2 for -3 <= x <= 3 (-1/2 at -3, 3/2 at 3), 0 below, 1 above.
TEST(SmoothActivations, SlopesAtTheKinksAreThoseOfPyTorch) {
  EXPECT_EQ(HardsigmoidFn::slope(HardsigmoidFn::of(-3.0f)), 0.0f);
  EXPECT_EQ(HardsigmoidFn::slope(HardsigmoidFn::of(3.0f)), 0.0f);
  EXPECT_EQ(HardsigmoidFn::slope(HardsigmoidFn::of(0.0f)), 1.0f / 6.0f);
  EXPECT_EQ(HardswishFn::slope(-3.0f), -0.5f);
  EXPECT_EQ(HardswishFn::slope(3.0f), 1.5f);
  EXPECT_EQ(HardswishFn::slope(-3.01f), 0.0f);
  EXPECT_EQ(HardswishFn::slope(3.01f), 1.0f);
  EXPECT_EQ(HardswishFn::of(-3.0f), 0.0f);
  EXPECT_EQ(HardswishFn::of(3.0f), 3.0f);
}

const Floats kX = {-4, -1, 0, 2, 5};
const Floats kDy = {10, 20, 30, 40, 50};

TEST(SmoothActivationLayers, InPlaceWhereTheSlopeIsOfTheOutput) {
  const Communicator world = Communicator::world();
  for (const Case& c : cases()) {
    for (bool sole_reader : {true, false}) {
      const bool in_place = sole_reader && c.slope_of_output;
      SCOPED_TRACE(testing::Message() << to_string(c.kind) << (sole_reader ? " sole reader" : ""));
      OneLayer layer(c.kind, sole_reader);
      EXPECT_EQ(layer->in_place(), in_place);
      EXPECT_EQ(layer->buffers().size(), in_place ? 0u : 2u);
      EXPECT_EQ(layer->storage_use().reads_output_in_backward, c.slope_of_output);
      EXPECT_EQ(layer->storage_use().reads_input_in_backward, !c.slope_of_output);
      Floats x = kX, dx(5, in_place ? 0.0f : 0.5f);
      const ActivationData out = layer->bind(world, {x.data(), dx.data()}, {});
      EXPECT_EQ(out.data == x.data(), in_place);
      StepContext step;
      layer->forward(step);
      Floats y(5), want(5);
      for (size_t i = 0; i < 5; ++i) {
        y[i] = c.of(kX[i]);
        want[i] = (in_place ? 0.0f : 0.5f) + kDy[i] * c.slope(c.slope_of_output ? y[i] : kX[i]);
      }
      EXPECT_EQ(Floats(out.data, out.data + 5), y);
      std::copy(kDy.begin(), kDy.end(), out.grad);
      layer->backward(step);
      EXPECT_EQ(dx, want);
      if (!in_place) {
        EXPECT_EQ(x, kX) << "the input keeps its values for backward";
      }
    }
  }
}

}  // namespace
}  // namespace convgrid
