// Exact memory: on every rank and every grid of the job's rank count, the bytes the memory tracker
// counts at their peak while the grid algorithm (a training step) or the streamed algorithm
// (several panel counts) runs equal the memory model (model/grid_memory.hpp,
// model/streamed_memory.hpp), at-rest slices and the local engine's own copies included, with the
// loop-nest engine and with oneDNN.
#include <mpi.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <vector>

#include "algo/grid_conv.hpp"
#include "algo/streamed_conv.hpp"
#include "comm/communicator.hpp"
#include "model/grid_memory.hpp"
#include "model/streamed_memory.hpp"
#include "../awkward_shapes.hpp"

namespace convgrid {
namespace {

using ::convgrid::test_data::kAwkwardGroupedShapes;
using ::convgrid::test_data::kAwkwardShapes;

const std::vector<Pass> kStep{Pass::forward, Pass::backward_data, Pass::backward_weights};

// Allocates the at-rest slices, builds the algorithm, runs the passes, and returns the peak of
// the tracked bytes above what was tracked before.
template <class Make>
int64_t measured_bytes(const LayerLayout& L, GridCoord g, const std::vector<Pass>& passes, Make make) {
  const int64_t base = MemoryTracker::current_bytes();
  MemoryTracker::reset_peak();
  {
    const auto uses = [&](Pass p) { return std::find(passes.begin(), passes.end(), p) != passes.end(); };
    const bool fwd = uses(Pass::forward), bwd_data = uses(Pass::backward_data), bwd_weights = uses(Pass::backward_weights);
    // The slices the passes read and write, as the models count them.
    Buffer in(fwd || bwd_weights ? L.in_slice(g).size() : 0), ker(fwd || bwd_data ? L.ker_slice(g).size() : 0);
    Buffer dout(bwd_data || bwd_weights ? L.out_slice(g).size() : 0), out(fwd ? L.out_slice(g).size() : 0);
    Buffer din(bwd_data ? L.in_slice(g).size() : 0), dker(bwd_weights ? L.ker_slice(g).size() : 0);
    in.fill(0.5f);
    ker.fill(0.25f);
    dout.fill(1.0f);
    auto conv = make();
    TrafficCounter t;
    for (Pass p : passes) {
      if (p == Pass::forward) conv->forward(in.data(), ker.data(), out.data(), t);
      if (p == Pass::backward_data) conv->backward_data(dout.data(), ker.data(), din.data(), t);
      if (p == Pass::backward_weights) conv->backward_weights(dout.data(), in.data(), dker.data(), t);
    }
  }
  return MemoryTracker::peak_bytes() - base;
}

void sweep(Backend engine, std::span<const char* const> shapes) {
  Communicator world = Communicator::world();
  for (const char* text : shapes) {
    const ConvShape s = ConvShape::parse(text);
    for (const GridDims& d : all_grids(world.size())) {
      if (!d.fits(s)) continue;
      ProcessGrid grid(d, world);
      const LayerLayout L(s, d);
      const GridCoord g = grid.coord();
      SCOPED_TRACE(std::string(text) + " grid " + d.to_string());
      EXPECT_EQ(measured_bytes(L, g, kStep, [&] { return std::make_unique<GridConv>(s, grid, engine); }),
                grid_memory_bytes(L, g, kStep, engine))
          << "grid algorithm, training step";
      // In place (the at-rest In slice used directly) or not, a forward pass on its own.
      EXPECT_EQ(measured_bytes(L, g, {Pass::forward}, [&] { return std::make_unique<GridConv>(s, grid, engine); }),
                grid_memory_bytes(L, g, {Pass::forward}, engine))
          << "grid algorithm, forward";
      // Every panel and piece count on up to 4 ranks; at 6 and 8, whose many grids make this the
      // longest MPI test, three of the six (every panel count and both piece counts still met).
      const bool all = world.size() <= 4;
      for (int64_t b : {1, 2, 3}) {
        if (s.groups != 1) break;  // the streamed algorithm does not run grouped layers
        for (int64_t pieces : {1, 2}) {
          if (!all && pieces != (b == 2 ? 2 : 1)) continue;  // (1, 1), (2, 2), (3, 1)
          EXPECT_EQ(measured_bytes(L, g, kStep, [&] {
                      return std::make_unique<StreamedConv>(s, grid, StreamOptions{b, pieces}, engine);
                    }),
                    streamed_memory_bytes(L, g, kStep, b, pieces, engine))
              << "streamed, " << b << " panels, " << pieces << " pieces";
        }
      }
      int failed = ::testing::Test::HasFailure() ? 1 : 0, any = 0;
      MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (any) return;
    }
  }
}

TEST(MemoryModel, TrackedPeakEqualsTheModel) {
  const char* shapes[] = {kAwkwardShapes[0], kAwkwardShapes[1], kAwkwardShapes[2], kAwkwardShapes[4],
                          kAwkwardGroupedShapes[0], kAwkwardGroupedShapes[1]};
  sweep(Backend::reference, shapes);
}

// With oneDNN the engine's own copies (its preferred layouts, scratchpads) are in the model too,
// grouped (depthwise) engines included.
TEST(MemoryModel, TrackedPeakEqualsTheModelWithOneDnn) {
  const char* shapes[] = {kAwkwardShapes[0], kAwkwardShapes[2], kAwkwardGroupedShapes[0]};
  sweep(Backend::onednn, shapes);
}

// More panels, less memory: on one 3x3 layer the streamed algorithm's model shrinks with b while
// its words stay those of the grid algorithm.
TEST(MemoryModel, PanelsShrinkMemory) {
  const ConvShape s = ConvShape::parse("N=8,C=64,H=14,W=14,K=64,R=3,S=3,pad=1");
  const LayerLayout L(s, GridDims{2, 1, 2, 2, 1});
  const GridCoord g{};
  int64_t previous = streamed_memory_bytes(L, g, kStep, 1, 1, Backend::reference);
  for (int64_t b : {2, 4, 8}) {
    const int64_t m = streamed_memory_bytes(L, g, kStep, b, 1, Backend::reference);
    EXPECT_LT(m, previous) << b << " panels";
    previous = m;
  }
}

}  // namespace
}  // namespace convgrid
