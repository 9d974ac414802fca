// Tests of the local convolution engine (LocalConv): the loop-nest reference against
// hand-computed values and the adjoint identities of the three passes, and with groups against
// the ungrouped reference run per group; the oneDNN backend against the reference over a seeded
// sample of shapes (filters, strides, padding, dilation, image sizes, channels, batch) and a
// list of grouped and depthwise ones; names, kernel threads and the fixed-order fully connected
// kernel. The engine's contracts are in local_conv_test.cpp.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "conv_operands.hpp"
#include "convgrid/conv_shape.hpp"
#include "convgrid/error.hpp"
#include "convgrid/local_conv.hpp"
#include "convgrid/memory.hpp"
#include "kernel/fixed_order_fc.hpp"

namespace convgrid {
namespace {

using namespace conv_test;

double dot(const Vec& a, const Vec& b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i) sum += double{a[i]} * b[i];
  return sum;
}

double abs_dot(const Vec& a, const Vec& b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i) sum += std::abs(double{a[i]} * b[i]);
  return sum;
}

// ---------------------------------------------------------------------------------------------
// The reference itself.

ConvShape tiny(const std::string& text) { return ConvShape::parse(text); }

// In 3x4 = 1..12, filter [[1,2],[3,4]], stride 1x2, pad top 1, pad right 1 (never read:
// Wo = floor((4+1-2)/2)+1 = 2). out[h,w] = sum_rs in[h+r-1, 2w+s] * ker[r,s].
TEST(Reference, ForwardMatchesHandComputedAsymmetricStridedCase) {
  const ConvShape g = tiny("N=1,C=1,H=3,W=4,K=1,R=2,S=2,stride=1x2,pad=1x0,pad_end=0x1");
  Vec in(12);
  for (int i = 0; i < 12; ++i) in[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  const Vec ker = {1, 2, 3, 4};
  Vec out(static_cast<size_t>(g.output_elems()));
  reference::forward(g, in.data(), ker.data(), nullptr, out.data());
  EXPECT_EQ(out, (Vec{11, 25, 44, 64, 84, 104}));
}

// In 1x5 = 1..5, filter (10, 1) dilated 2, pad left 1: out[w] = 10*in[w-1] + in[w+1].
TEST(Reference, ThreePassesMatchHandComputedDilatedCase) {
  const ConvShape g = tiny("N=1,C=1,H=1,W=5,K=1,R=1,S=2,pad=0x1,pad_end=0x0,dilation=1x2");
  const Vec in = {1, 2, 3, 4, 5}, ker = {10, 1}, bias = {0.5f}, dout = {1, 1, 1, 1};
  Vec out(4), din(5), dker(2), dbias(1);
  reference::forward(g, in.data(), ker.data(), bias.data(), out.data());
  reference::backward_data(g, dout.data(), ker.data(), din.data());
  reference::backward_weights(g, dout.data(), in.data(), dker.data(), dbias.data());
  EXPECT_EQ(out, (Vec{2.5f, 13.5f, 24.5f, 35.5f}));
  EXPECT_EQ(din, (Vec{10, 11, 11, 1, 1}));
  EXPECT_EQ(dker, (Vec{6, 14}));
  EXPECT_EQ(dbias, (Vec{4}));
}

// Depthwise (C = K = groups = 2), each channel its own 1x2 filter over a 1x3 image:
// in ch0 = (1, 2, 3), ch1 = (4, 5, 6); Ker[0] = (1, 2), Ker[1] = (3, -1); bias (0.5, -1);
// dOut ch0 = (1, 2), ch1 = (-1, 1).
//   out ch0 = (1*1 + 2*2, 2*1 + 3*2) + 0.5 = (5.5, 8.5); ch1 = (4*3 - 5, 5*3 - 6) - 1 = (6, 8)
//   dIn ch0 = (1*1, 1*2 + 2*1, 2*2) = (1, 4, 4); ch1 = (-1*3, -1*-1 + 1*3, 1*-1) = (-3, 4, -1)
//   dKer[0] = (1*1 + 2*2, 1*2 + 2*3) = (5, 8); dKer[1] = (-4 + 5, -5 + 6) = (1, 1)
//   dBias = (1 + 2, -1 + 1) = (3, 0)
// (An ungrouped layer would mix the channels: out ch0 would also read ch1.)
TEST(Reference, ThreePassesMatchHandComputedDepthwiseCase) {
  const ConvShape g = tiny("N=1,C=2,H=1,W=3,K=2,R=1,S=2,groups=2");
  const Vec in = {1, 2, 3, 4, 5, 6}, ker = {1, 2, 3, -1}, bias = {0.5f, -1}, dout = {1, 2, -1, 1};
  Vec out(4), din(6), dker(4), dbias(2);
  reference::forward(g, in.data(), ker.data(), bias.data(), out.data());
  reference::backward_data(g, dout.data(), ker.data(), din.data());
  reference::backward_weights(g, dout.data(), in.data(), dker.data(), dbias.data());
  EXPECT_EQ(out, (Vec{5.5f, 8.5f, 6, 8}));
  EXPECT_EQ(din, (Vec{1, 4, 4, -3, 4, -1}));
  EXPECT_EQ(dker, (Vec{5, 8, 1, 1}));
  EXPECT_EQ(dbias, (Vec{3, 0}));
}

// The grouped reference as an independent oracle computes it: the ungrouped reference once per
// group, on that group's slices of every operand (input channels, filters, bias, output-gradient
// channels) copied out, its results copied into the group's slices.
Results per_group_results(const ConvShape& g, const Operands& op) {
  ConvShape one = g;
  one.C = g.Cg();
  one.K = g.Kg();
  one.groups = 1;
  const int64_t in_plane = g.H * g.W, out_plane = g.Ho() * g.Wo(), filter = one.C * g.R * g.S;
  Results r = empty_results(g, !op.bias.empty());
  for (int64_t group = 0; group < g.groups; ++group) {
    const int64_t c0 = group * one.C, k0 = group * one.K;
    Operands part;
    part.in = channels(op.in.data(), g.N, g.C, in_plane, c0, one.C);
    part.ker = channels(op.ker.data(), 1, g.K, filter, k0, one.K);
    if (!op.bias.empty()) part.bias = channels(op.bias.data(), 1, g.K, 1, k0, one.K);
    part.dout = channels(op.dout.data(), g.N, g.K, out_plane, k0, one.K);
    const Results res = reference_results(one, part);
    put_channels(res.out, g.N, g.K, out_plane, k0, r.out);
    put_channels(res.din, g.N, g.C, in_plane, c0, r.din);
    put_channels(res.dker, 1, g.K, filter, k0, r.dker);
    put_channels(res.dbias, 1, g.K, 1, k0, r.dbias);
  }
  return r;
}

TEST(Reference, GroupedPassesAreTheUngroupedOnesPerGroup) {
  const char* const shapes[] = {
      "N=2,C=6,H=5,W=7,K=4,R=3,S=2,stride=2x1,pad=1,pad_end=0x1,dilation=1x2,groups=2",
      "N=1,C=8,H=4,W=5,K=16,R=3,S=3,pad=1,groups=4",
      "N=2,C=3,H=5,W=4,K=3,R=3,S=3,stride=2,pad=1,groups=3"};
  uint32_t seed = 40;
  for (const char* text : shapes) {
    for (bool with_bias : {false, true}) {
      const ConvShape g = tiny(text);
      const Operands op = random_operands(g, with_bias, seed += 10);
      expect_identical(reference_results(g, op), per_group_results(g, op));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The sample of shapes the oneDNN backend is checked on.

struct Extent2 {
  int64_t h, w;
};
enum class Padding { none, symmetric, more_at_start, more_at_end };

const Extent2 kFilters[] = {{1, 1}, {2, 2}, {3, 3}, {5, 5}, {7, 7}, {1, 7}, {7, 1}};
const Extent2 kStrides[] = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {2, 1}};
const Padding kPaddings[] = {Padding::none, Padding::symmetric, Padding::more_at_start,
                             Padding::more_at_end};
const int64_t kDilations[] = {1, 2};
const int64_t kImageSizes[] = {1, 7, 15, 16, 63};
const int64_t kChannels[] = {1, 3, 16, 64};
const int64_t kBatches[] = {1, 2, 3, 4, 5, 6, 7, 8};

constexpr int kSampleSize = 300;
constexpr int64_t kMaxMacs = 4'000'000;  // keeps the loop-nest reference fast

// Begin and end padding of one dimension whose dilated filter extent is `extent`.
std::pair<int64_t, int64_t> padding(Padding kind, int64_t extent) {
  const int64_t half = (extent - 1) / 2;
  switch (kind) {
    case Padding::none:
      return {0, 0};
    case Padding::symmetric:
      return {half, half};
    case Padding::more_at_start:
      return {extent - 1, half};
    case Padding::more_at_end:
      return {half, extent - 1};
  }
  return {0, 0};
}

struct SweepCase {
  ConvShape shape;
  bool with_bias;
  uint32_t seed;
};

void PrintTo(const SweepCase& c, std::ostream* os) {
  *os << c.shape.to_string() << (c.with_bias ? " with bias" : "") << " seed " << c.seed;
}

template <typename T, size_t n>
const T& pick(const T (&values)[n], std::mt19937& rng) {
  return values[std::uniform_int_distribution<size_t>(0, n - 1)(rng)];
}

// kSampleSize distinct valid shapes, every axis drawn uniformly from a fixed seed; shapes the
// filter does not fit (validate() throws) or over kMaxMacs are redrawn.
std::vector<SweepCase> sweep_cases() {
  std::mt19937 rng(20240521);
  std::vector<SweepCase> cases;
  std::set<std::string> seen;
  while (cases.size() < static_cast<size_t>(kSampleSize)) {
    ConvShape g;
    const Extent2 filter = pick(kFilters, rng), stride = pick(kStrides, rng);
    const Padding pad = pick(kPaddings, rng);
    g.R = filter.h;
    g.S = filter.w;
    g.stride_h = stride.h;
    g.stride_w = stride.w;
    g.dil_h = g.dil_w = pick(kDilations, rng);
    std::tie(g.pad_top, g.pad_bottom) = padding(pad, g.dil_h * (g.R - 1) + 1);
    std::tie(g.pad_left, g.pad_right) = padding(pad, g.dil_w * (g.S - 1) + 1);
    g.H = pick(kImageSizes, rng);
    g.W = pick(kImageSizes, rng);
    g.C = pick(kChannels, rng);
    g.K = pick(kChannels, rng);
    g.N = pick(kBatches, rng);
    try {
      g.validate();
    } catch (const InputError&) {
      continue;
    }
    if (g.macs() > kMaxMacs || !seen.insert(g.to_string()).second) continue;
    const auto index = static_cast<uint32_t>(cases.size());
    cases.push_back({g, index % 3 == 0, 1000 * index});
  }
  return cases;
}

std::string case_name(const testing::TestParamInfo<SweepCase>& info) {
  std::string name = fmt::format("{:03}_{}{}", info.index, info.param.shape.to_string(),
                                 info.param.with_bias ? "_bias" : "");
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(c); }, '_');
  return name;
}

class Sweep : public testing::TestWithParam<SweepCase> {};

TEST_P(Sweep, OneDnnMatchesReferenceAndReferenceIsSelfAdjoint) {
  const SweepCase& c = GetParam();
  const Operands op = random_operands(c.shape, c.with_bias, c.seed);
  const Results want = reference_results(c.shape, op);
  LocalConv conv(c.shape, c.with_bias);
  expect_close(plain_results(conv, op), want);

  // <forward(x, w) + b, dy> = <x, backward_data(dy, w)> + <b, dbias>
  //                         = <w, backward_weights(dy, x)> + <b, dbias>.
  const double lhs = dot(want.out, op.dout);
  const double bias_term = dot(op.bias, want.dbias);
  const double scale = abs_dot(want.out, op.dout) + abs_dot(op.in, want.din) +
                       abs_dot(op.ker, want.dker) + std::abs(bias_term) + 1.0;
  EXPECT_NEAR(lhs, dot(op.in, want.din) + bias_term, 1e-5 * scale);
  EXPECT_NEAR(lhs, dot(op.ker, want.dker) + bias_term, 1e-5 * scale);
}

INSTANTIATE_TEST_SUITE_P(Kernel, Sweep, testing::ValuesIn(sweep_cases()), case_name);

// Grouped shapes, each with and without bias: depthwise (G = C = K) with a 3x3 filter and pad 1,
// stride 2, dilation 2, asymmetric padding, a channel multiplier (K = 2C); G = 2 and 4 with
// several channels per group, K != C, a 1x1 filter and a fully connected layer. Channel counts
// that oneDNN blocks (16, 24, 32, 64) and odd ones (3, 5, 15) that it keeps plain.
std::vector<SweepCase> grouped_cases() {
  const char* const shapes[] = {
      "N=2,C=32,H=15,W=15,K=32,R=3,S=3,pad=1,groups=32",
      "N=2,C=24,H=16,W=15,K=24,R=3,S=3,stride=2,pad=1,groups=24",
      "N=1,C=16,H=15,W=16,K=16,R=3,S=3,pad=2,dilation=2,groups=16",
      "N=2,C=3,H=7,W=9,K=3,R=3,S=3,pad=1x0,pad_end=0x2,groups=3",
      "N=3,C=5,H=8,W=7,K=5,R=5,S=5,stride=2x1,pad=2,pad_end=1x2,groups=5",
      "N=2,C=8,H=9,W=8,K=16,R=3,S=3,pad=1,groups=8",
      "N=2,C=6,H=9,W=9,K=10,R=3,S=3,pad=1,groups=2",
      "N=2,C=32,H=8,W=8,K=32,R=3,S=3,pad=1,groups=2",
      "N=2,C=8,H=9,W=7,K=16,R=3,S=3,stride=2,pad=1,groups=4",
      "N=3,C=64,H=7,W=7,K=32,R=1,S=1,groups=4",
      "N=2,C=15,H=7,W=6,K=15,R=2,S=3,stride=2,dilation=2x1,groups=5",
      "N=6,C=24,H=1,W=1,K=12,R=1,S=1,groups=3"};
  std::vector<SweepCase> cases;
  for (const char* text : shapes) {
    for (bool with_bias : {false, true}) {
      const auto index = static_cast<uint32_t>(cases.size());
      cases.push_back({ConvShape::parse(text), with_bias, 500'000 + 1000 * index});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Grouped, Sweep, testing::ValuesIn(grouped_cases()), case_name);

// Every listed value of every axis is in the sample, in several combinations.
TEST(SweepSample, CoversEveryValueOfEveryAxisAtLeastThreeTimes) {
  std::map<std::string, int> count;
  for (const SweepCase& c : sweep_cases()) {
    const ConvShape& g = c.shape;
    const int64_t extent_h = g.dil_h * (g.R - 1) + 1;
    for (Padding p : kPaddings) {
      if (g.R > 1 && padding(p, extent_h) == std::pair{g.pad_top, g.pad_bottom}) {
        ++count[fmt::format("padding {}", static_cast<int>(p))];
      }
    }
    ++count[fmt::format("filter {}x{}", g.R, g.S)];
    ++count[fmt::format("stride {}x{}", g.stride_h, g.stride_w)];
    ++count[fmt::format("dilation {}", g.dil_h)];
    ++count[fmt::format("H {}", g.H)];
    ++count[fmt::format("W {}", g.W)];
    ++count[fmt::format("C {}", g.C)];
    ++count[fmt::format("K {}", g.K)];
    ++count[fmt::format("N {}", g.N)];
    ++count[c.with_bias ? "with bias" : "without bias"];
  }
  std::vector<std::string> expected = {"with bias", "without bias"};
  for (auto f : kFilters) expected.push_back(fmt::format("filter {}x{}", f.h, f.w));
  for (auto s : kStrides) expected.push_back(fmt::format("stride {}x{}", s.h, s.w));
  for (auto p : kPaddings) expected.push_back(fmt::format("padding {}", static_cast<int>(p)));
  for (auto d : kDilations) expected.push_back(fmt::format("dilation {}", d));
  for (auto v : kImageSizes) {
    expected.push_back(fmt::format("H {}", v));
    expected.push_back(fmt::format("W {}", v));
  }
  for (auto v : kChannels) {
    expected.push_back(fmt::format("C {}", v));
    expected.push_back(fmt::format("K {}", v));
  }
  for (auto v : kBatches) expected.push_back(fmt::format("N {}", v));
  for (const std::string& key : expected) EXPECT_GE(count[key], 3) << key;
}

TEST(Checker, RejectsOneElementOutsideTheTolerance) {
  Vec want = random_data(100, 7);
  Vec got = want;
  EXPECT_TRUE(close(got, want));
  got[42] += 2e-4f;
  EXPECT_FALSE(close(got, want));
}

TEST(Names, PassesAndTensors) {
  EXPECT_EQ(pass_name(Pass::backward_weights), "backward_weights");
  EXPECT_EQ(tensor_name(Tensor::grad_bias), "grad_bias");
}

TEST(KernelThreads, SetAndReadBack) {
  const int before = kernel_threads();
  EXPECT_EQ(set_kernel_threads(1), 1);
  EXPECT_EQ(kernel_threads(), 1);
  EXPECT_EQ(set_kernel_threads(before), before);
}


// The fixed-order fully connected kernels (reproducible training): the reference's results, and
// the same bits however the rows are split over calls.
TEST(FixedOrderFc, MatchesReferenceAndIsTheSameInAnyRowChunks) {
  const int64_t N = 13, C = 37, K = 5;  // C not a multiple of the 16 lanes: the tail is used
  const ConvShape s = ConvShape::parse(fmt::format("N={},C={},H=1,W=1,K={},R=1,S=1", N, C, K));
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(N * C), w(K * C), dy(N * K);
  for (auto* v : {&x, &w, &dy}) {
    for (float& e : *v) e = u(rng);
  }
  std::vector<float> y(N * K), dx(N * C), ry(N * K), rdx(N * C), rdw(K * C);
  std::vector<double> dw(K * C, 0.5);  // the kernel adds to what is there
  fixed_order_fc_forward(N, C, K, x.data(), w.data(), y.data());
  fixed_order_fc_backward_data(N, C, K, dy.data(), w.data(), dx.data());
  fixed_order_fc_backward_weights_add(N, C, K, dy.data(), x.data(), dw.data());
  reference::forward(s, x.data(), w.data(), nullptr, ry.data());
  reference::backward_data(s, dy.data(), w.data(), rdx.data());
  reference::backward_weights(s, dy.data(), x.data(), rdw.data(), nullptr);
  for (int64_t i = 0; i < N * K; ++i) EXPECT_NEAR(y[i], ry[i], 1e-5f * (1 + std::abs(ry[i]))) << i;
  for (int64_t i = 0; i < N * C; ++i) EXPECT_NEAR(dx[i], rdx[i], 1e-5f * (1 + std::abs(rdx[i]))) << i;
  for (int64_t i = 0; i < K * C; ++i) EXPECT_NEAR(dw[i] - 0.5, rdw[i], 1e-5 * (1 + std::abs(rdw[i]))) << i;

  // Rows 0-4 and 5-12 in two calls: the same bits.
  const int64_t a = 5, b = N - a;
  std::vector<float> y2(N * K), dx2(N * C);
  std::vector<double> dw2(K * C, 0.5);
  fixed_order_fc_forward(a, C, K, x.data(), w.data(), y2.data());
  fixed_order_fc_forward(b, C, K, x.data() + a * C, w.data(), y2.data() + a * K);
  fixed_order_fc_backward_data(a, C, K, dy.data(), w.data(), dx2.data());
  fixed_order_fc_backward_data(b, C, K, dy.data() + a * K, w.data(), dx2.data() + a * C);
  fixed_order_fc_backward_weights_add(a, C, K, dy.data(), x.data(), dw2.data());
  fixed_order_fc_backward_weights_add(b, C, K, dy.data() + a * K, x.data() + a * C, dw2.data());
  EXPECT_EQ(y2, y);
  EXPECT_EQ(dx2, dx);
  EXPECT_EQ(dw2, dw);
}

}  // namespace
}  // namespace convgrid
