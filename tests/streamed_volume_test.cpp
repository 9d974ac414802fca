// The streamed algorithm's panels and traffic model (model/streamed_volume.hpp): which range each
// pass streams, and the filter panels of backward-weights, counted by hand; and the planner's
// representative ranks, which must attain the busiest rank's link loads of every panel count.
#include <gtest/gtest.h>

#include "layout/fibre_slices.hpp"
#include "model/grid_volume.hpp"
#include "model/streamed_volume.hpp"
#include "model/volume_stats.hpp"
#include "awkward_shapes.hpp"

namespace convgrid {
namespace {

// A ResNet-style 3x3 layer: K x C x 3 x 3 = 8 x 6 x 9 = 432 weights.
const ConvShape kLayer = ConvShape::parse("N=8,C=6,H=10,W=10,K=8,R=3,S=3,pad=1");

TEST(StreamedVolume, DataParallelWeightsStreamFiltersAndReduceEachPanel) {
  // 4x1x1x1x1: every rank holds its samples' input whole (read in place), and dKer is summed over
  // the nhw-fibre of 4, whose flat slices hold 108 weights each.
  const LayerLayout L(kLayer, GridDims{4, 1, 1, 1, 1});
  for (int64_t r = 0; r < 4; ++r) {
    const GridCoord g = L.dims().coord_of(r);
    ASSERT_TRUE(weights_in_filter_panels(L, g));
    const std::vector<Range> ps = stream_panels(L, g, Pass::backward_weights, 3);
    ASSERT_EQ(ps.size(), 3u);
    EXPECT_EQ(ps[0], (Range{0, 3}));  // 8 filters in 3: 3, 3, 2
    EXPECT_EQ(ps[1], (Range{3, 6}));
    EXPECT_EQ(ps[2], (Range{6, 8}));
    // Panel 0 is flat [0, 162) of the block: slice 0 [0, 108) whole, 54 of slice 1 [108, 216).
    const Box4 block = L.ker_block(g);
    EXPECT_EQ(filter_panel_flat(block, ps[0]), (Range{0, 162}));
    EXPECT_EQ(filter_panel_flat(block, ps[2]), (Range{324, 432}));
    const std::vector<Slice> slices = FibreSlices(L, g).ker;
    EXPECT_EQ(filter_panel_counts(slices, filter_panel_flat(block, ps[0])), (std::vector<int64_t>{108, 54, 0, 0}));
    EXPECT_EQ(filter_panel_counts(slices, filter_panel_flat(block, ps[1])), (std::vector<int64_t>{0, 54, 108, 0}));
    EXPECT_EQ(filter_panel_counts(slices, filter_panel_flat(block, ps[2])), (std::vector<int64_t>{0, 0, 0, 108}));
    // Each panel's non-blocking reduce-scatter: one message and one round; together the grid
    // algorithm's words, 3 * 108 received on every rank.
    const PassVolume v = streamed_pass_volume(L, g, Pass::backward_weights, 3);
    EXPECT_EQ(v.reduce_scatter, 3 * 108);
    EXPECT_EQ(v.reduce_scatter, grid_pass_volume(L, g, Pass::backward_weights, Held{}).reduce_scatter);
    EXPECT_EQ(v.all_gather + v.point_to_point, 0);
    EXPECT_EQ(v.messages, 3);
    EXPECT_EQ(v.latency_steps, 3);
  }
}

TEST(StreamedVolume, WeightsStreamSamplesWhereTheInputMoves) {
  // A halo (Ph = 2), an input gathered over the k-fibre (Pk = 2), or no nhw-fibre to reduce over:
  // backward-weights keeps its sample panels and its one reduce-scatter.
  for (const GridDims& d : {GridDims{2, 1, 1, 2, 1}, GridDims{2, 2, 1, 1, 1}, GridDims{1, 2, 2, 1, 1}}) {
    const LayerLayout L(kLayer, d);
    const GridCoord g{};
    EXPECT_FALSE(weights_in_filter_panels(L, g)) << d.to_string();
    const Range samples = L.n_block(g.n);
    EXPECT_EQ(stream_panels(L, g, Pass::backward_weights, 2).front(),
              balanced_block(samples.size(), 2, 0).shifted(samples.begin))
        << d.to_string();
    EXPECT_EQ(streamed_pass_volume(L, g, Pass::backward_weights, 2).reduce_scatter,
              grid_pass_volume(L, g, Pass::backward_weights, Held{}).reduce_scatter)
        << d.to_string();
  }
}

// The planner takes a streamed grid's busiest link loads over representative_ranks
// (plan/layer_planner.cpp). Without a node level they equal a visit of every rank. With nodes
// cutting the grid anywhere, messages and rounds are still exact, and so is the split of the
// words between node and network for the reduce-scatters and halos; not for the linear gathers,
// whose words from the members on the rank's node add up slices of unequal size at positions the
// classes do not fix (26 of 33,624 cases here, by up to 6% of the network words).
TEST(StreamedVolume, RepresentativesAttainTheBusiestLinkLoads) {
  std::vector<const char*> shapes(std::begin(test_data::kAwkwardShapes), std::end(test_data::kAwkwardShapes));
  shapes.push_back("N=6,C=20,H=29,W=27,K=18,R=3,S=3,pad=1");
  int sampled = 0, inexact = 0, with_nodes = 0;
  for (const char* text : shapes) {
    const ConvShape s = ConvShape::parse(text);
    for (int64_t P : {6, 8, 12, 30, 48}) {
      for (const GridDims& d : all_grids(P)) {
        if (!d.fits(s)) continue;
        const LayerLayout L(s, d);
        for (int64_t node : {0, 3, 4, 8}) {
          const std::vector<GridCoord> reps = representative_ranks(L, node);
          for (Pass p : {Pass::forward, Pass::backward_data, Pass::backward_weights}) {
            for (int64_t panels : {2, 3}) {
              CommLoad want, got;
              for (int64_t r = 0; r < P; ++r) {
                want = want.max_with(CommLoad::of(streamed_pass_volume(L, d.coord_of(r), p, panels, node)));
              }
              for (const GridCoord& g : reps) got = got.max_with(CommLoad::of(streamed_pass_volume(L, g, p, panels, node)));
              SCOPED_TRACE(std::string(text) + " grid " + d.to_string() + " node " + std::to_string(node) + " " +
                           std::string(pass_name(p)) + " panels " + std::to_string(panels));
              ASSERT_EQ(got.messages, want.messages);
              ASSERT_DOUBLE_EQ(got.network_steps, want.network_steps);
              ASSERT_DOUBLE_EQ(got.node_steps, want.node_steps);
              if (node == 0) {
                ASSERT_EQ(got.network_words, want.network_words);
                ASSERT_EQ(got.node_words, want.node_words);
              } else {
                ASSERT_NEAR(static_cast<double>(got.network_words), static_cast<double>(want.network_words),
                            0.1 * static_cast<double>(want.network_words));
                ASSERT_NEAR(static_cast<double>(got.node_words), static_cast<double>(want.node_words),
                            0.1 * static_cast<double>(want.node_words));
                inexact += got.network_words != want.network_words || got.node_words != want.node_words;
                ++with_nodes;
              }
              sampled += reps.size() < static_cast<size_t>(P);
            }
          }
        }
      }
    }
  }
  EXPECT_GT(sampled, 5000);  // cases where the representatives are fewer than the ranks
  EXPECT_LT(inexact * 1000, with_nodes);  // under one in a thousand
}

}  // namespace
}  // namespace convgrid
