// Tests of the local convolution engine (LocalConv): the loop-nest reference against
// hand-computed values and the adjoint identities of the three passes; the oneDNN backend
// against the reference over a seeded sample of shapes (filters, strides, padding, dilation,
// image sizes, channels, batch); and the engine's contracts: bias, repeatable results, no
// allocation in steady state, the resident API, the reference backend, input errors.
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

#include "convgrid/conv_shape.hpp"
#include "convgrid/error.hpp"
#include "convgrid/local_conv.hpp"
#include "convgrid/memory.hpp"
#include "kernel/fixed_order_fc.hpp"

namespace convgrid {
namespace {

using Vec = std::vector<float>;

Vec random_data(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Vec v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// Every element within 1e-4 * max(1, max |want|) of the reference.
testing::AssertionResult close(const Vec& got, const Vec& want) {
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

// The operands of one layer's three passes, random from a seed.
struct Operands {
  Vec in, ker, bias, dout;
};

Operands random_operands(const ConvShape& g, bool with_bias, uint32_t seed) {
  return {random_data(g.input_elems(), seed), random_data(g.weight_elems(), seed + 1),
          with_bias ? random_data(g.K, seed + 2) : Vec{}, random_data(g.output_elems(), seed + 3)};
}

// What the three passes compute.
struct Results {
  Vec out, din, dker, dbias;
};

Results empty_results(const ConvShape& g, bool with_bias) {
  return {Vec(static_cast<size_t>(g.output_elems())), Vec(static_cast<size_t>(g.input_elems())),
          Vec(static_cast<size_t>(g.weight_elems())),
          Vec(with_bias ? static_cast<size_t>(g.K) : 0)};
}

float* data_or_null(Vec& v) { return v.empty() ? nullptr : v.data(); }
const float* data_or_null(const Vec& v) { return v.empty() ? nullptr : v.data(); }

Results reference_results(const ConvShape& g, const Operands& op) {
  Results r = empty_results(g, !op.bias.empty());
  reference::forward(g, op.in.data(), op.ker.data(), data_or_null(op.bias), r.out.data());
  reference::backward_data(g, op.dout.data(), op.ker.data(), r.din.data());
  reference::backward_weights(g, op.dout.data(), op.in.data(), r.dker.data(),
                              data_or_null(r.dbias));
  return r;
}

Results plain_results(LocalConv& conv, const Operands& op) {
  Results r = empty_results(conv.shape(), conv.with_bias());
  conv.forward(op.in.data(), op.ker.data(), data_or_null(op.bias), r.out.data());
  conv.backward_data(op.dout.data(), op.ker.data(), r.din.data());
  conv.backward_weights(op.dout.data(), op.in.data(), r.dker.data(), data_or_null(r.dbias));
  return r;
}

void prepare_all(LocalConv& conv) {
  for (Pass p : {Pass::forward, Pass::backward_data, Pass::backward_weights}) conv.prepare(p);
}

// A training step through the resident API: each operand loaded once.
Results resident_results(LocalConv& conv, const Operands& op) {
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

void expect_close(const Results& got, const Results& want) {
  EXPECT_TRUE(close(got.out, want.out)) << "forward";
  EXPECT_TRUE(close(got.din, want.din)) << "backward_data";
  EXPECT_TRUE(close(got.dker, want.dker)) << "backward_weights";
  EXPECT_TRUE(close(got.dbias, want.dbias)) << "backward_weights (bias)";
}

void expect_identical(const Results& got, const Results& want) {
  EXPECT_EQ(got.out, want.out);
  EXPECT_EQ(got.din, want.din);
  EXPECT_EQ(got.dker, want.dker);
  EXPECT_EQ(got.dbias, want.dbias);
}

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

// ---------------------------------------------------------------------------------------------
// The engine's contracts.

const ConvShape kLayer = ConvShape::parse("N=2,C=16,H=15,W=16,K=32,R=3,S=3,pad=1");
const ConvShape kStridedLayer =
    ConvShape::parse("N=3,C=3,H=16,W=15,K=16,R=5,S=3,stride=2,pad=2x1,pad_end=1x2");

TEST(Checker, RejectsOneElementOutsideTheTolerance) {
  Vec want = random_data(100, 7);
  Vec got = want;
  EXPECT_TRUE(close(got, want));
  got[42] += 2e-4f;
  EXPECT_FALSE(close(got, want));
}

TEST(LocalConv, BiasAndBiasGradientMatchReference) {
  for (const ConvShape& g : {kLayer, kStridedLayer}) {
    const Operands op = random_operands(g, true, 11);
    LocalConv conv(g, true);
    expect_close(plain_results(conv, op), reference_results(g, op));
  }
}

TEST(LocalConv, BiasGradientMayBeOmitted) {
  const Operands op = random_operands(kLayer, true, 12);
  LocalConv conv(kLayer, true);
  Vec dker(static_cast<size_t>(kLayer.weight_elems()));
  conv.backward_weights(op.dout.data(), op.in.data(), dker.data(), nullptr);
  EXPECT_TRUE(close(dker, reference_results(kLayer, op).dker));
}

TEST(LocalConv, RepeatedCallsGiveIdenticalResults) {
  const Operands op = random_operands(kStridedLayer, true, 13);
  LocalConv conv(kStridedLayer, true);
  const Results first = plain_results(conv, op);
  expect_identical(plain_results(conv, op), first);
  expect_identical(plain_results(conv, op), first);
  expect_identical(resident_results(conv, op), first);
  expect_identical(resident_results(conv, op), first);
}

// With reuse on, a step's passes give what they give without it; an operand changed in place is
// read afresh only after inputs_changed() (the caller's promise), and reuse off reads it always.
// kLayer's input and output gradient are blocked (16 and 32 channels), so both are reordered.
TEST(LocalConv, ReusedReordersGiveThePlainResultsUntilInputsChange) {
  const Operands op = random_operands(kLayer, true, 19);
  const Operands other = random_operands(kLayer, true, 20);
  LocalConv fresh(kLayer, true);
  const Results want = plain_results(fresh, op);
  const Results want_other = plain_results(fresh, other);
  LocalConv conv(kLayer, true);
  conv.reuse_reordered_inputs(true);
  Operands work = op;  // arrays whose contents change in place below
  expect_identical(plain_results(conv, work), want);

  const auto overwrite = [&work](const Operands& with) {
    std::copy(with.in.begin(), with.in.end(), work.in.begin());
    std::copy(with.dout.begin(), with.dout.end(), work.dout.begin());
    std::copy(with.ker.begin(), with.ker.end(), work.ker.begin());
    std::copy(with.bias.begin(), with.bias.end(), work.bias.begin());
  };
  overwrite(other);
  Results stale = empty_results(kLayer, true);
  conv.backward_weights(work.dout.data(), work.in.data(), stale.dker.data(), nullptr);
  EXPECT_EQ(stale.dker, want.dker) << "reordered again without inputs_changed()";
  conv.inputs_changed();
  expect_identical(plain_results(conv, work), want_other);

  conv.reuse_reordered_inputs(false);
  overwrite(op);
  expect_identical(plain_results(conv, work), want);
}

TEST(LocalConv, SteadyStateCallsAllocateNothing) {
  const Operands op = random_operands(kLayer, true, 14);
  LocalConv conv(kLayer, true);
  plain_results(conv, op);
  resident_results(conv, op);
  const int64_t before = MemoryTracker::current_bytes();
  MemoryTracker::reset_peak();
  plain_results(conv, op);
  resident_results(conv, op);
  EXPECT_EQ(MemoryTracker::current_bytes(), before);
  EXPECT_EQ(MemoryTracker::peak_bytes(), before);
}

TEST(LocalConv, KeepsItsBuffersInTheMemoryTracker) {
  const int64_t before = MemoryTracker::current_bytes();
  {
    LocalConv conv(kLayer, false);
    prepare_all(conv);
    const int64_t plain_bytes =
        4 * (2 * kLayer.input_elems() + 2 * kLayer.weight_elems() + 2 * kLayer.output_elems());
    EXPECT_GE(MemoryTracker::current_bytes() - before, plain_bytes);
  }
  EXPECT_EQ(MemoryTracker::current_bytes(), before);
}

// engine_bytes is what the plain-layout calls of each set of passes keep, to the byte, on shapes
// whose preferred layouts are blocked and plain; and nothing for the reference backend.
TEST(LocalConv, EngineBytesAreWhatPlainCallsKeep) {
  const std::vector<std::vector<Pass>> sets = {
      {Pass::forward}, {Pass::backward_data}, {Pass::backward_weights},
      {Pass::forward, Pass::backward_data, Pass::backward_weights}};
  for (const ConvShape& shape : {kLayer, kStridedLayer, ConvShape::parse("N=2,C=3,H=9,W=9,K=5,R=3,S=3")}) {
    const Operands op = random_operands(shape, false, 16);
    for (const std::vector<Pass>& passes : sets) {
      const int64_t before = MemoryTracker::current_bytes();
      MemoryTracker::reset_peak();
      {
        LocalConv conv(shape, false);
        Vec out(shape.output_elems()), din(shape.input_elems()), dker(shape.weight_elems());
        for (Pass p : passes) {
          if (p == Pass::forward) conv.forward(op.in.data(), op.ker.data(), nullptr, out.data());
          if (p == Pass::backward_data) conv.backward_data(op.dout.data(), op.ker.data(), din.data());
          if (p == Pass::backward_weights) conv.backward_weights(op.dout.data(), op.in.data(), dker.data(), nullptr);
        }
        EXPECT_EQ(MemoryTracker::peak_bytes() - before, engine_bytes(shape, false, Backend::onednn, passes))
            << shape.to_string() << ", " << passes.size() << " passes starting " << pass_name(passes[0]);
      }
      EXPECT_EQ(engine_bytes(shape, false, Backend::reference, passes), 0);
    }
  }
}

// A panel read where it lies in a larger block (PlainStrides): channels [2, 2+C) of the input
// and weights, filters [3, 3+K) of the output gradient, each `lead` floats apart along
// dimension 0, give exactly the results of the same panels copied out densely; engine_bytes
// counts what the strided engine keeps. Also for a fully connected shape (one image of N rows).
TEST(LocalConv, StridedPanelsGiveTheDenseResults) {
  for (const ConvShape& panel : {kLayer, kStridedLayer, ConvShape::parse("N=6,C=24,H=1,W=1,K=40,R=1,S=1")}) {
    const int64_t extra_c = 5, extra_k = 7, c0 = 2, k0 = 3;
    ConvShape block = panel;
    block.C += extra_c;
    block.K += extra_k;
    const Operands whole = random_operands(block, false, 17);
    // The dense copies of the panels: input channels and weight channels [c0, c0 + C), output
    // gradient filters [k0, k0 + K), weights of those filters.
    const int64_t in_plane = panel.H * panel.W, out_plane = panel.Ho() * panel.Wo(), taps = panel.R * panel.S;
    Vec in, ker_c, dout, ker_k;
    for (int64_t n = 0; n < panel.N; ++n) {
      const float* from = whole.in.data() + (n * block.C + c0) * in_plane;
      in.insert(in.end(), from, from + panel.C * in_plane);
      const float* grad = whole.dout.data() + (n * block.K + k0) * out_plane;
      dout.insert(dout.end(), grad, grad + panel.K * out_plane);
    }
    // ker_c: the weights of all K filters of the panel shape, channels [c0, c0 + C) (forward,
    // backward-weights); ker_k: filters [k0, k0 + K), all of their C channels (backward-data).
    for (int64_t k = 0; k < panel.K; ++k) {
      const float* from = whole.ker.data() + (k * block.C + c0) * taps;
      ker_c.insert(ker_c.end(), from, from + panel.C * taps);
    }
    for (int64_t k = 0; k < panel.K; ++k) {
      const float* from = whole.ker.data() + ((k0 + k) * block.C + c0) * taps;
      ker_k.insert(ker_k.end(), from, from + panel.C * taps);
    }
    const PlainStrides strides{.input = block.C * in_plane, .grad_output = block.K * out_plane,
                               .weights = block.C * taps};
    LocalConv dense(panel, false);
    Results want = empty_results(panel, false), got = empty_results(panel, false);
    dense.forward(in.data(), ker_c.data(), nullptr, want.out.data());
    dense.backward_data(dout.data(), ker_k.data(), want.din.data());
    dense.backward_weights(dout.data(), in.data(), want.dker.data(), nullptr);

    const int64_t before = MemoryTracker::current_bytes();
    MemoryTracker::reset_peak();
    {
      LocalConv viewed(panel, false, Backend::onednn, strides);
      const float* in_view = whole.in.data() + c0 * in_plane;
      const float* dout_view = whole.dout.data() + k0 * out_plane;
      viewed.forward(in_view, whole.ker.data() + c0 * taps, nullptr, got.out.data());
      viewed.backward_data(dout_view, whole.ker.data() + (k0 * block.C + c0) * taps, got.din.data());
      viewed.backward_weights(dout_view, in_view, got.dker.data(), nullptr);
      EXPECT_EQ(MemoryTracker::peak_bytes() - before,
                engine_bytes(panel, false, Backend::onednn,
                             {Pass::forward, Pass::backward_data, Pass::backward_weights}, strides))
          << panel.to_string();
    }
    expect_identical(got, want);
    EXPECT_THROW(LocalConv(panel, false, Backend::reference, strides), Error);
  }
}

TEST(LocalConv, ResidentLoadStoreRoundTripIsExact) {
  const Operands op = random_operands(kStridedLayer, true, 15);
  LocalConv conv(kStridedLayer, true);
  prepare_all(conv);
  const std::pair<Tensor, const Vec*> loaded[] = {{Tensor::input, &op.in},
                                                  {Tensor::weights, &op.ker},
                                                  {Tensor::bias, &op.bias},
                                                  {Tensor::grad_output, &op.dout}};
  for (auto [t, plain] : loaded) {
    conv.load(t, plain->data());
    Vec back(plain->size());
    conv.store(t, back.data());
    EXPECT_EQ(back, *plain) << tensor_name(t);
  }
}

TEST(LocalConv, ResidentPassesMatchPlainCallsAndReference) {
  for (const ConvShape& g : {kLayer, kStridedLayer}) {
    const Operands op = random_operands(g, true, 16);
    LocalConv conv(g, true);
    const Results resident = resident_results(conv, op);
    expect_close(resident, reference_results(g, op));
    LocalConv fresh(g, true);
    expect_identical(plain_results(fresh, op), resident);
  }
}

TEST(LocalConv, ResidentApiRejectsMisuse) {
  LocalConv conv(kLayer, false);
  const Vec data(static_cast<size_t>(kLayer.output_elems()));
  Vec out(data.size());
  EXPECT_THROW(conv.run(Pass::forward), Error);
  EXPECT_THROW(conv.load(Tensor::input, data.data()), Error);
  conv.prepare(Pass::forward);
  EXPECT_THROW(conv.load(Tensor::output, data.data()), Error);
  EXPECT_THROW(conv.load(Tensor::grad_output, data.data()), Error);
  EXPECT_THROW(conv.store(Tensor::grad_input, out.data()), Error);
  EXPECT_THROW(conv.run(Pass::backward_data), Error);
}

TEST(LocalConv, PlainCallsRejectAMismatchedBias) {
  const Operands op = random_operands(kLayer, true, 17);
  Results r = empty_results(kLayer, true);
  LocalConv with(kLayer, true), without(kLayer, false);
  EXPECT_THROW(with.forward(op.in.data(), op.ker.data(), nullptr, r.out.data()), InputError);
  EXPECT_THROW(without.forward(op.in.data(), op.ker.data(), op.bias.data(), r.out.data()),
               InputError);
  EXPECT_THROW(
      without.backward_weights(op.dout.data(), op.in.data(), r.dker.data(), r.dbias.data()),
      InputError);
}

TEST(LocalConv, RejectsAShapeTheFilterDoesNotFit) {
  ConvShape g = kLayer;
  g.H = 1;
  g.pad_top = g.pad_bottom = 0;
  EXPECT_THROW(LocalConv(g, false), InputError);
}

TEST(LocalConv, ReferenceBackendIsTheReference) {
  const Operands op = random_operands(kStridedLayer, true, 18);
  const Results want = reference_results(kStridedLayer, op);
  LocalConv conv(kStridedLayer, true, Backend::reference);
  EXPECT_EQ(conv.backend(), Backend::reference);
  expect_identical(plain_results(conv, op), want);
  expect_identical(resident_results(conv, op), want);
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
