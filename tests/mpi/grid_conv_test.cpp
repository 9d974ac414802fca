// The grid algorithm under mpiexec: for every factorisation of the job's rank count and awkward
// layer shapes, all three passes equal the loop-nest reference (within 1e-4 relative) and the
// words and messages each rank received equal the cost model exactly, pass by pass and kind by
// kind. Passes run as a training step (forward, backward-data, backward-weights: gathered
// operands kept) and each on its own (every operand gathered).
#include <mpi.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "algo/grid_conv.hpp"
#include "comm/communicator.hpp"
#include "layout/pack.hpp"
#include "../awkward_shapes.hpp"
#include "tensor_helpers.hpp"

namespace convgrid {
namespace {

using ::convgrid::test_data::kAwkwardGroupedShapes;
using ::convgrid::test_data::kAwkwardShapes;

using ::convgrid::test_data::random_tensor;
using ::convgrid::test_data::slice_of;
using ::convgrid::test_data::sweep_grids;

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float scale,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::fabs(got[i] - want[i]), 1e-4f * std::max(1.0f, scale)) << what << " element " << i;
  }
}

float max_abs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

void expect_traffic(const TrafficCounter& t, const PassVolume& v, const char* pass) {
  const Traffic& got = t.traffic();
  EXPECT_EQ(got[CommKind::all_gather].words, v.all_gather) << pass;
  EXPECT_EQ(got[CommKind::reduce_scatter].words, v.reduce_scatter) << pass;
  EXPECT_EQ(got[CommKind::point_to_point].words, v.point_to_point) << pass;
  EXPECT_EQ(got.words(), v.words()) << pass;
  EXPECT_EQ(got.messages(), v.messages) << pass;
}

struct Reference {
  ConvShape s;
  std::vector<float> in, ker, dout, out, din, dker;
  explicit Reference(const ConvShape& shape, unsigned seed) : s(shape) {
    in = random_tensor(s.input_elems(), seed);
    ker = random_tensor(s.weight_elems(), seed + 1);
    dout = random_tensor(s.output_elems(), seed + 2);
    out.resize(s.output_elems());
    din.resize(s.input_elems());
    dker.resize(s.weight_elems());
    reference::forward(s, in.data(), ker.data(), nullptr, out.data());
    reference::backward_data(s, dout.data(), ker.data(), din.data());
    reference::backward_weights(s, dout.data(), in.data(), dker.data(), nullptr);
  }
};

// Runs the three passes in order; as a training step the gathered operands are kept from pass to
// pass, otherwise each pass starts afresh and gathers all it reads.
void check_passes(GridConv& conv, const Reference& ref, bool as_training_step) {
  const ConvShape& s = ref.s;
  const Box4 in_all = input_box(s), ker_all = weight_box(s), out_all = output_box(s);
  const LayerLayout& L = conv.layout();
  const GridCoord g = conv.coord();
  std::vector<float> in = slice_of(L.in_slice(g), in_all, ref.in);
  std::vector<float> ker = slice_of(L.ker_slice(g), ker_all, ref.ker);
  std::vector<float> dout = slice_of(L.out_slice(g), out_all, ref.dout);
  std::vector<float> out(conv.out_slice_size(), 7.0f), din(conv.in_slice_size(), 7.0f),
      dker(conv.ker_slice_size(), 7.0f);

  Held held;
  conv.new_step();
  auto next = [&](Pass p) {
    held = held_after(p, held);
    if (!as_training_step) {
      conv.new_step();
      held = {};
    }
  };
  TrafficCounter t;
  conv.forward(in.data(), ker.data(), out.data(), t);
  expect_traffic(t, grid_pass_volume(L, g, Pass::forward, held), "forward");
  next(Pass::forward);
  t.reset();
  conv.backward_data(dout.data(), ker.data(), din.data(), t);
  expect_traffic(t, grid_pass_volume(L, g, Pass::backward_data, held), "backward_data");
  next(Pass::backward_data);
  t.reset();
  conv.backward_weights(dout.data(), in.data(), dker.data(), t);
  expect_traffic(t, grid_pass_volume(L, g, Pass::backward_weights, held), "backward_weights");

  expect_close(out, slice_of(L.out_slice(g), out_all, ref.out), max_abs(ref.out), "forward");
  expect_close(din, slice_of(L.in_slice(g), in_all, ref.din), max_abs(ref.din), "backward_data");
  expect_close(dker, slice_of(L.ker_slice(g), ker_all, ref.dker), max_abs(ref.dker),
               "backward_weights");
}

// Every grid of the job's rank count that fits each shape.
void sweep(Backend backend, std::span<const char* const> shapes) {
  Communicator world = Communicator::world();
  unsigned seed = 11;
  for (const char* text : shapes) {
    const ConvShape s = ConvShape::parse(text);
    const Reference ref(s, seed++);
    for (const GridDims& d : sweep_grids(world.size())) {
      if (!d.fits(s)) continue;
      SCOPED_TRACE(std::string(text) + " grid " + d.to_string());
      ProcessGrid grid(d, world);
      GridConv conv(s, grid, backend);
      {
        SCOPED_TRACE("as a training step");
        check_passes(conv, ref, true);
      }
      {
        SCOPED_TRACE("each pass on its own");
        check_passes(conv, ref, false);
      }
      // Stop at the first failing grid, on every rank together (no rank left in a collective).
      int failed = ::testing::Test::HasFailure() ? 1 : 0, any = 0;
      MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (any) return;
    }
  }
}

// The distribution logic over all awkward shapes, with the loop-nest kernels (fast to set up).
TEST(GridConv, AllPassesMatchReferenceAndModelOnEveryGrid) { sweep(Backend::reference, kAwkwardShapes); }

// Grouped layers (depthwise and groups of a few channels), whose k-fibre splits the groups: the
// same assertions, with both engines.
TEST(GridConv, GroupedLayersOnEveryGrid) { sweep(Backend::reference, kAwkwardGroupedShapes); }
TEST(GridConv, GroupedLayersWithOneDnnOnEveryGrid) {
  const char* shapes[] = {kAwkwardGroupedShapes[0]};
  sweep(Backend::onednn, shapes);
}

// The same with oneDNN as the local engine, on one of the shapes.
TEST(GridConv, OneDnnEngineOnEveryGrid) {
  const char* shapes[] = {kAwkwardShapes[0]};
  sweep(Backend::onednn, shapes);
}

}  // namespace
}  // namespace convgrid
