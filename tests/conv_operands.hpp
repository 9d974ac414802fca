// Operands and results of one layer's three local passes, for the tests of the local
// convolution engine (kernel_test.cpp: the reference and the oneDNN sweep; local_conv_test.cpp:
// the engine's contracts): seeded random operands, the reference's results, the results of the
// plain-layout calls and of the resident API, channel slices copied out and in, and the
// comparisons (close to the reference, or identical bits).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "convgrid/conv_shape.hpp"
#include "convgrid/local_conv.hpp"

namespace convgrid::conv_test {

using Vec = std::vector<float>;

inline Vec random_data(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Vec v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// Every element within 1e-4 * max(1, max |want|) of the reference.
inline testing::AssertionResult close(const Vec& got, const Vec& want) {
  if (got.size() != want.size()) {
    return testing::AssertionFailure() << "sizes " << got.size() << " and " << want.size();
  }
  float scale = 1.0f;
  for (float w : want) scale = std::max(scale, std::abs(w));
  const double tol = 1e-4 * scale;
  for (size_t i = 0; i < got.size(); ++i) {
    if (!(std::abs(static_cast<double>(got[i]) - want[i]) <= tol)) {
      return testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", want "
                                         << want[i] << " (tolerance " << tol << ")";
    }
  }
  return testing::AssertionSuccess();
}

// Channels [c0, c0 + count) of the n consecutive (C, plane) arrays at `a` (the samples of an
// NCHW activation, the filters of KCRS weights with C x R x S as the plane, the entries of a
// bias with n = 1 and plane 1), copied out as a dense (n, count, plane) array.
inline Vec channels(const float* a, int64_t n, int64_t C, int64_t plane, int64_t c0,
                    int64_t count) {
  Vec part;
  for (int64_t i = 0; i < n; ++i) {
    const float* from = a + (i * C + c0) * plane;
    part.insert(part.end(), from, from + count * plane);
  }
  return part;
}

// The converse: a dense (n, count, plane) array copied into channels [c0, c0 + count) of the
// n consecutive (C, plane) arrays of `a`, count = part.size() / (n * plane).
inline void put_channels(const Vec& part, int64_t n, int64_t C, int64_t plane, int64_t c0, Vec& a) {
  const int64_t count = static_cast<int64_t>(part.size()) / (n * plane);
  for (int64_t i = 0; i < n; ++i) {
    std::copy_n(part.begin() + i * count * plane, count * plane, a.begin() + (i * C + c0) * plane);
  }
}

// The operands of one layer's three passes, random from a seed.
struct Operands {
  Vec in, ker, bias, dout;
};

inline Operands random_operands(const ConvShape& g, bool with_bias, uint32_t seed) {
  return {random_data(g.input_elems(), seed), random_data(g.weight_elems(), seed + 1),
          with_bias ? random_data(g.K, seed + 2) : Vec{}, random_data(g.output_elems(), seed + 3)};
}

// What the three passes compute.
struct Results {
  Vec out, din, dker, dbias;
};

inline Results empty_results(const ConvShape& g, bool with_bias) {
  return {Vec(static_cast<size_t>(g.output_elems())), Vec(static_cast<size_t>(g.input_elems())),
          Vec(static_cast<size_t>(g.weight_elems())),
          Vec(with_bias ? static_cast<size_t>(g.K) : 0)};
}

inline float* data_or_null(Vec& v) { return v.empty() ? nullptr : v.data(); }
inline const float* data_or_null(const Vec& v) { return v.empty() ? nullptr : v.data(); }

inline Results reference_results(const ConvShape& g, const Operands& op) {
  Results r = empty_results(g, !op.bias.empty());
  reference::forward(g, op.in.data(), op.ker.data(), data_or_null(op.bias), r.out.data());
  reference::backward_data(g, op.dout.data(), op.ker.data(), r.din.data());
  reference::backward_weights(g, op.dout.data(), op.in.data(), r.dker.data(),
                              data_or_null(r.dbias));
  return r;
}

inline Results plain_results(LocalConv& conv, const Operands& op) {
  Results r = empty_results(conv.shape(), conv.with_bias());
  conv.forward(op.in.data(), op.ker.data(), data_or_null(op.bias), r.out.data());
  conv.backward_data(op.dout.data(), op.ker.data(), r.din.data());
  conv.backward_weights(op.dout.data(), op.in.data(), r.dker.data(), data_or_null(r.dbias));
  return r;
}

inline void prepare_all(LocalConv& conv) {
  for (Pass p : {Pass::forward, Pass::backward_data, Pass::backward_weights}) conv.prepare(p);
}

// A training step through the resident API: each operand loaded once.
inline Results resident_results(LocalConv& conv, const Operands& op) {
  Results r = empty_results(conv.shape(), conv.with_bias());
  prepare_all(conv);
  conv.load(Tensor::input, op.in.data());
  conv.load(Tensor::weights, op.ker.data());
  if (conv.with_bias()) conv.load(Tensor::bias, op.bias.data());
  conv.load(Tensor::grad_output, op.dout.data());
  for (Pass p : {Pass::forward, Pass::backward_data, Pass::backward_weights}) conv.run(p);
  conv.store(Tensor::output, r.out.data());
  conv.store(Tensor::grad_input, r.din.data());
  conv.store(Tensor::grad_weights, r.dker.data());
  if (conv.with_bias()) conv.store(Tensor::grad_bias, r.dbias.data());
  return r;
}

inline void expect_close(const Results& got, const Results& want) {
  EXPECT_TRUE(close(got.out, want.out)) << "forward";
  EXPECT_TRUE(close(got.din, want.din)) << "backward_data";
  EXPECT_TRUE(close(got.dker, want.dker)) << "backward_weights";
  EXPECT_TRUE(close(got.dbias, want.dbias)) << "backward_weights (bias)";
}

inline void expect_identical(const Results& got, const Results& want) {
  EXPECT_EQ(got.out, want.out);
  EXPECT_EQ(got.din, want.din);
  EXPECT_EQ(got.dker, want.dker);
  EXPECT_EQ(got.dbias, want.dbias);
}

}  // namespace convgrid::conv_test
