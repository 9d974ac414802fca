// The streamed grid algorithm under mpiexec: for every grid of the job's rank count, awkward
// shapes and several panel counts, each pass equals the unstreamed grid algorithm within 1e-5
// (relative to the largest value) and the loop-nest reference within 1e-4; the words and messages
// each rank received equal the streamed model exactly, and the words of each kind equal the grid
// algorithm's with nothing held. No request outlives a pass (Request::outstanding() is 0 after
// each).
#include <mpi.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "algo/grid_conv.hpp"
#include "algo/streamed_conv.hpp"
#include "comm/communicator.hpp"
#include "layout/pack.hpp"
#include "model/streamed_volume.hpp"
#include "../awkward_shapes.hpp"
#include "tensor_helpers.hpp"

namespace convgrid {
namespace {

using ::convgrid::test_data::kAwkwardShapes;

using ::convgrid::test_data::random_tensor;
using ::convgrid::test_data::slice_of;
using ::convgrid::test_data::sweep_grids;

void expect_close(const std::vector<float>& got, const std::vector<float>& want, float tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  float scale = 1;
  for (float x : want) scale = std::max(scale, std::fabs(x));
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::fabs(got[i] - want[i]), tol * scale) << what << " element " << i;
  }
}

void expect_traffic(const TrafficCounter& t, const PassVolume& streamed, const PassVolume& unstreamed,
                    const char* pass) {
  const Traffic& got = t.traffic();
  EXPECT_EQ(got[CommKind::all_gather].words, streamed.all_gather) << pass;
  EXPECT_EQ(got[CommKind::reduce_scatter].words, streamed.reduce_scatter) << pass;
  EXPECT_EQ(got[CommKind::point_to_point].words, streamed.point_to_point) << pass;
  EXPECT_EQ(got.messages(), streamed.messages) << pass;
  EXPECT_EQ(Request::outstanding(), 0) << pass << ": a request outlived its pass";
  EXPECT_EQ(streamed.all_gather, unstreamed.all_gather) << pass;
  EXPECT_EQ(streamed.reduce_scatter, unstreamed.reduce_scatter) << pass;
  EXPECT_EQ(streamed.point_to_point, unstreamed.point_to_point) << pass;
}

struct Tensors {
  std::vector<float> in, ker, dout, out, din, dker;
};

void sweep(Backend backend, std::span<const char* const> shapes, std::initializer_list<int64_t> panel_counts) {
  Communicator world = Communicator::world();
  unsigned seed = 21;
  for (const char* text : shapes) {
    const ConvShape s = ConvShape::parse(text);
    const std::vector<float> in = random_tensor(s.input_elems(), seed), ker = random_tensor(s.weight_elems(), seed + 1),
                             dout = random_tensor(s.output_elems(), seed + 2);
    seed += 3;
    std::vector<float> ref_out(s.output_elems()), ref_din(s.input_elems()), ref_dker(s.weight_elems());
    reference::forward(s, in.data(), ker.data(), nullptr, ref_out.data());
    reference::backward_data(s, dout.data(), ker.data(), ref_din.data());
    reference::backward_weights(s, dout.data(), in.data(), ref_dker.data(), nullptr);
    const Box4 in_all = input_box(s), ker_all = weight_box(s), out_all = output_box(s);
    for (const GridDims& d : sweep_grids(world.size())) {
      if (!d.fits(s)) continue;
      ProcessGrid grid(d, world);
      // The unstreamed grid algorithm, each pass on its own.
      GridConv plain(s, grid, backend);
      const LayerLayout& L = plain.layout();
      const GridCoord g = plain.coord();
      const std::vector<float> my_in = slice_of(L.in_slice(g), in_all, in),
                               my_ker = slice_of(L.ker_slice(g), ker_all, ker),
                               my_dout = slice_of(L.out_slice(g), out_all, dout);
      Tensors want{{}, {}, {}, std::vector<float>(L.out_slice(g).size()), std::vector<float>(L.in_slice(g).size()),
                   std::vector<float>(L.ker_slice(g).size())};
      TrafficCounter t;
      plain.forward(my_in.data(), my_ker.data(), want.out.data(), t);
      plain.new_step();
      plain.backward_data(my_dout.data(), my_ker.data(), want.din.data(), t);
      plain.new_step();
      plain.backward_weights(my_dout.data(), my_in.data(), want.dker.data(), t);
      for (int64_t b : panel_counts) {
        SCOPED_TRACE(std::string(text) + " grid " + d.to_string() + " panels " + std::to_string(b));
        StreamedConv conv(s, grid, StreamOptions{b, 2}, backend);
        std::vector<float> out(want.out.size(), 7.0f), din(want.din.size(), 7.0f), dker(want.dker.size(), 7.0f);
        for (int repeat = 0; repeat < 2; ++repeat) {  // the second run reuses every buffer
          t.reset();
          conv.forward(my_in.data(), my_ker.data(), out.data(), t);
          expect_traffic(t, streamed_pass_volume(L, g, Pass::forward, b), grid_pass_volume(L, g, Pass::forward, {}), "forward");
          t.reset();
          conv.backward_data(my_dout.data(), my_ker.data(), din.data(), t);
          expect_traffic(t, streamed_pass_volume(L, g, Pass::backward_data, b),
                         grid_pass_volume(L, g, Pass::backward_data, {}), "backward_data");
          t.reset();
          conv.backward_weights(my_dout.data(), my_in.data(), dker.data(), t);
          expect_traffic(t, streamed_pass_volume(L, g, Pass::backward_weights, b),
                         grid_pass_volume(L, g, Pass::backward_weights, {}), "backward_weights");
        }
        expect_close(out, want.out, 1e-5f, "forward against unstreamed");
        expect_close(din, want.din, 1e-5f, "backward_data against unstreamed");
        expect_close(dker, want.dker, 1e-5f, "backward_weights against unstreamed");
        expect_close(out, slice_of(L.out_slice(g), out_all, ref_out), 1e-4f, "forward against reference");
        expect_close(din, slice_of(L.in_slice(g), in_all, ref_din), 1e-4f, "backward_data against reference");
        expect_close(dker, slice_of(L.ker_slice(g), ker_all, ref_dker), 1e-4f, "backward_weights against reference");
        int failed = ::testing::Test::HasFailure() ? 1 : 0, any = 0;
        MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (any) return;
      }
    }
  }
}

TEST(StreamedConv, EveryGridAndPanelCountMatchesTheGridAlgorithmAndTheModel) {
  const char* shapes[] = {kAwkwardShapes[0], kAwkwardShapes[2], kAwkwardShapes[4], kAwkwardShapes[1]};
  sweep(Backend::reference, shapes, {1, 2, 3});
}

TEST(StreamedConv, OneDnnEngine) {
  const char* shapes[] = {kAwkwardShapes[0]};
  sweep(Backend::onednn, shapes, {2});
}

}  // namespace
}  // namespace convgrid
