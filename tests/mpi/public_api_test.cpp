// The public DistributedConv (include/convgrid/distributed_conv.hpp) under mpiexec: on every
// grid of the job's rank count (every third at 6 and 8 ranks) and three awkward layers (one
// grouped), its slices are the internal layout's, a training step (forward, backward-data,
// backward-weights) equals the loop-nest reference within 1e-4 of the largest value, and the
// words each rank received in each pass equal modelled_words and, run alone, the public cost
// model. A streamed plan from the public planner
// runs too; a grid of the wrong size is one InputError on every rank.
#include <mpi.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "convgrid/cost_model.hpp"
#include "convgrid/distributed_conv.hpp"
#include "convgrid/planner.hpp"
#include "layout/layer_layout.hpp"
#include "../throws_input_error.hpp"
#include "tensor_helpers.hpp"

namespace convgrid {
namespace {

using ::convgrid::test_data::random_tensor;
using ::convgrid::test_data::slice_of;
using ::convgrid::test_data::sweep_grids;

const char* kShapes[] = {
    "N=3,C=5,H=9,W=7,K=4,R=3,S=3,pad=1",
    "N=2,C=3,H=15,W=15,K=6,R=5,S=5,stride=2,pad=2",
    "N=2,C=4,H=8,W=7,K=8,R=3,S=3,pad=1,groups=4",  // grouped: C/G = 1, K/G = 2
};

// Every grid of P ranks up to 4; at 6 and 8 (36 and 80 grids, all of which the grid algorithm's
// own test runs) every third, the first and the last: this test is about the public interface.
std::vector<GridDims> grids_of(int P) {
  std::vector<GridDims> all = sweep_grids(P);
  if (P <= 4) return all;
  std::vector<GridDims> some;
  for (size_t i = 0; i < all.size(); ++i) {
    if (i % 3 == 0 || i + 1 == all.size()) some.push_back(all[i]);
  }
  return some;
}

void expect_same_slice(const TensorSlice& t, const Slice& s) {
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(t.begin[d], s.box.r[d].begin);
    EXPECT_EQ(t.end[d], s.box.r[d].end);
  }
  EXPECT_EQ(t.flat_begin, s.flat.begin);
  EXPECT_EQ(t.flat_end, s.flat.end);
}

void expect_close(const std::vector<float>& got, const std::vector<float>& whole, const Slice& s,
                  const Box4& global, const char* what) {
  const std::vector<float> want = slice_of(s, global, whole);
  float scale = 1;
  for (float x : whole) scale = std::max(scale, std::fabs(x));
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) ASSERT_LE(std::fabs(got[i] - want[i]), 1e-4f * scale) << what << " element " << i;
}

// A training step of `conv` on whole tensors made from seeds, checked against the reference.
void check_step(DistributedConv& conv, const LayerLayout& L, GridCoord g) {
  const ConvShape& s = conv.shape();
  const std::vector<Pass> step{Pass::forward, Pass::backward_data, Pass::backward_weights};
  const Box4 in_all = input_box(s), ker_all = weight_box(s), out_all = output_box(s);
  const std::vector<float> in = random_tensor(s.input_elems(), 1), ker = random_tensor(s.weight_elems(), 2),
                           dout = random_tensor(s.output_elems(), 3);
  std::vector<float> out_ref(s.output_elems()), din_ref(s.input_elems()), dker_ref(s.weight_elems());
  reference::forward(s, in.data(), ker.data(), nullptr, out_ref.data());
  reference::backward_data(s, dout.data(), ker.data(), din_ref.data());
  reference::backward_weights(s, dout.data(), in.data(), dker_ref.data(), nullptr);

  const std::vector<float> my_in = slice_of(L.in_slice(g), in_all, in), my_ker = slice_of(L.ker_slice(g), ker_all, ker),
                           my_dout = slice_of(L.out_slice(g), out_all, dout);
  std::vector<float> out(conv.output_slice().size()), din(conv.input_slice().size()), dker(conv.weight_slice().size());
  conv.new_step();
  conv.forward(my_in.data(), my_ker.data(), out.data());
  EXPECT_EQ(conv.last_words(), conv.modelled_words(Pass::forward, step));
  EXPECT_EQ(conv.last_words(), rank_words(s, conv.grid(), L.dims().rank_of(g), Pass::forward));
  conv.backward_data(my_dout.data(), my_ker.data(), din.data());
  EXPECT_EQ(conv.last_words(), conv.modelled_words(Pass::backward_data, step));
  conv.backward_weights(my_dout.data(), my_in.data(), dker.data());
  EXPECT_EQ(conv.last_words(), conv.modelled_words(Pass::backward_weights, step));
  expect_close(out, out_ref, L.out_slice(g), out_all, "forward");
  expect_close(din, din_ref, L.in_slice(g), in_all, "backward_data");
  expect_close(dker, dker_ref, L.ker_slice(g), ker_all, "backward_weights");
}

TEST(PublicDistributedConv, EveryGridEqualsTheReferenceAndTheModel) {
  int P = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  for (const char* text : kShapes) {
    const ConvShape shape = ConvShape::parse(text);
    for (const GridDims& grid : grids_of(P)) {
      if (!grid.fits(shape)) continue;
      SCOPED_TRACE(fmt::format("{} on {}", text, grid.to_string()));
      DistributedConv conv(shape, grid, MPI_COMM_WORLD);
      const LayerLayout L(shape, grid);
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      const GridCoord g = grid.coord_of(rank);
      EXPECT_EQ(conv.coord(), g);
      expect_same_slice(conv.input_slice(), L.in_slice(g));
      expect_same_slice(conv.weight_slice(), L.ker_slice(g));
      expect_same_slice(conv.output_slice(), L.out_slice(g));
      check_step(conv, L, g);
    }
  }
}

TEST(PublicDistributedConv, RunsAStreamedPlan) {
  int P = 0, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const ConvShape shape = ConvShape::parse(kShapes[0]);
  GridDims grid;
  grid.Pn = P == 6 ? 3 : 1;  // a grid of every rank count the tests use that fits the layer
  grid.Pk = P / grid.Pn;
  if (!grid.fits(shape)) GTEST_SKIP() << "no such grid for " << P << " ranks";
  LayerPlanSummary plan = plan_layer_on(shape, grid, {});
  plan.algorithm = "streamed";
  plan.panels = 2;
  DistributedConv conv(plan, MPI_COMM_WORLD);
  check_step(conv, LayerLayout(shape, grid), grid.coord_of(rank));
}

TEST(PublicDistributedConv, WrongSizeIsOneInputError) {
  int P = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  const ConvShape shape = ConvShape::parse("N=16,C=4,H=8,W=8,K=4,R=3,S=3,pad=1");
  GridDims grid;
  grid.Pn = P + 1;
  EXPECT_TRUE(throws_input_error([&] { DistributedConv(shape, grid, MPI_COMM_WORLD); },
                                 {grid.to_string(), std::to_string(P)}));
}

}  // namespace
}  // namespace convgrid
