// Tests of the local convolution engine's contracts (LocalConv): bias, repeatable results, reordered
// operands reused until they change, no allocation in steady state, the memory it keeps (as
// engine_bytes says), strided panels, the resident API, the reference backend, input errors;
// grouped and depthwise layers among the shapes.
// The reference and the oneDNN sweep against it are in kernel_test.cpp.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "conv_operands.hpp"
#include "convgrid/conv_shape.hpp"
#include "convgrid/error.hpp"
#include "convgrid/local_conv.hpp"
#include "convgrid/memory.hpp"

namespace convgrid {
namespace {

using namespace conv_test;

const ConvShape kLayer = ConvShape::parse("N=2,C=16,H=15,W=16,K=32,R=3,S=3,pad=1");
const ConvShape kStridedLayer =
    ConvShape::parse("N=3,C=3,H=16,W=15,K=16,R=5,S=3,stride=2,pad=2x1,pad_end=1x2");
// Grouped layers: depthwise over 16 channels (blocked layouts), and 3 groups of 4 input and 2
// output channels, strided and asymmetrically padded (plain layouts).
const ConvShape kDepthwiseLayer =
    ConvShape::parse("N=2,C=16,H=15,W=16,K=16,R=3,S=3,pad=1,groups=16");
const ConvShape kGroupedLayer =
    ConvShape::parse("N=3,C=12,H=9,W=8,K=6,R=3,S=3,stride=2,pad=1x0,pad_end=0x1,groups=3");


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
// The input and output gradient of kLayer (16 and 32 channels) and of kDepthwiseLayer (16) are
// blocked, so both are reordered.
TEST(LocalConv, ReusedReordersGiveThePlainResultsUntilInputsChange) {
  for (const ConvShape& g : {kLayer, kDepthwiseLayer}) {
    SCOPED_TRACE(g.to_string());
    const Operands op = random_operands(g, true, 19);
    const Operands other = random_operands(g, true, 20);
    LocalConv fresh(g, true);
    const Results want = plain_results(fresh, op);
    const Results want_other = plain_results(fresh, other);
    LocalConv conv(g, true);
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
    Results stale = empty_results(g, true);
    conv.backward_weights(work.dout.data(), work.in.data(), stale.dker.data(), nullptr);
    EXPECT_EQ(stale.dker, want.dker) << "reordered again without inputs_changed()";
    conv.inputs_changed();
    expect_identical(plain_results(conv, work), want_other);

    conv.reuse_reordered_inputs(false);
    overwrite(op);
    expect_identical(plain_results(conv, work), want);
  }
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
// whose preferred layouts are blocked and plain, with and without groups; and nothing for the
// reference backend.
TEST(LocalConv, EngineBytesAreWhatPlainCallsKeep) {
  const std::vector<std::vector<Pass>> sets = {
      {Pass::forward}, {Pass::backward_data}, {Pass::backward_weights},
      {Pass::forward, Pass::backward_data, Pass::backward_weights}};
  const ConvShape small = ConvShape::parse("N=2,C=3,H=9,W=9,K=5,R=3,S=3");
  for (const ConvShape& shape : {kLayer, kStridedLayer, small, kDepthwiseLayer, kGroupedLayer}) {
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
// counts what the strided engine keeps. Also for a fully connected shape (one image of N rows)
// and grouped ones, whose filters read channels [2, 2+C/G) of the block's weights.
TEST(LocalConv, StridedPanelsGiveTheDenseResults) {
  const ConvShape fully_connected = ConvShape::parse("N=6,C=24,H=1,W=1,K=40,R=1,S=1");
  for (const ConvShape& panel :
       {kLayer, kStridedLayer, fully_connected, kDepthwiseLayer, kGroupedLayer}) {
    const int64_t extra_c = 5, extra_k = 7, c0 = 2, k0 = 3;
    ConvShape block = panel;  // plain arrays holding the panels, its weights block.K x block.C
    block.C += extra_c;
    block.K += extra_k;
    block.groups = 1;
    const Operands whole = random_operands(block, false, 17);
    // The dense copies of the panels: input channels [c0, c0 + C), output gradient filters
    // [k0, k0 + K); ker_c: the weights of the panel's K filters, channels [c0, c0 + C/G)
    // (forward, backward-weights); ker_k: those of filters [k0, k0 + K) (backward-data).
    const int64_t in_plane = panel.H * panel.W, out_plane = panel.Ho() * panel.Wo(), taps = panel.R * panel.S;
    const Vec in = channels(whole.in.data(), panel.N, block.C, in_plane, c0, panel.C);
    const Vec dout = channels(whole.dout.data(), panel.N, block.K, out_plane, k0, panel.K);
    const Vec ker_c = channels(whole.ker.data(), panel.K, block.C, taps, c0, panel.Cg());
    const Vec ker_k =
        channels(whole.ker.data() + k0 * block.C * taps, panel.K, block.C, taps, c0, panel.Cg());
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
  for (const ConvShape& g : {kStridedLayer, kDepthwiseLayer, kGroupedLayer}) {
    const Operands op = random_operands(g, true, 15);
    LocalConv conv(g, true);
    prepare_all(conv);
    const std::pair<Tensor, const Vec*> loaded[] = {{Tensor::input, &op.in},
                                                    {Tensor::weights, &op.ker},
                                                    {Tensor::bias, &op.bias},
                                                    {Tensor::grad_output, &op.dout}};
    for (auto [t, plain] : loaded) {
      conv.load(t, plain->data());
      Vec back(plain->size());
      conv.store(t, back.data());
      EXPECT_EQ(back, *plain) << g.to_string() << ", " << tensor_name(t);
    }
  }
}

TEST(LocalConv, ResidentPassesMatchPlainCallsAndReference) {
  for (const ConvShape& g : {kLayer, kStridedLayer, kDepthwiseLayer, kGroupedLayer}) {
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
  for (const ConvShape& g : {kStridedLayer, kGroupedLayer}) {
    const Operands op = random_operands(g, true, 18);
    const Results want = reference_results(g, op);
    LocalConv conv(g, true, Backend::reference);
    EXPECT_EQ(conv.backend(), Backend::reference);
    expect_identical(plain_results(conv, op), want);
    expect_identical(resident_results(conv, op), want);
  }
}

}  // namespace
}  // namespace convgrid
