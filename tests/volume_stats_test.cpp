// The planner's per-grid statistics (largest and mean words and messages over ranks) against a
// brute-force visit of every rank with grid_pass_volume: equal, exactly, on awkward shapes and
// every grid of up to 24 ranks, for each pass with and without held operands; and the busiest
// rank's network and node loads when nodes of 2 to 5 ranks cut the grid's fibres and halos.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "model/volume_stats.hpp"
#include "awkward_shapes.hpp"

namespace convgrid {
namespace {

using ::convgrid::test_data::kAwkwardGroupedShapes;
using ::convgrid::test_data::kAwkwardShapes;

VolumeStats brute_force(const LayerLayout& L, Pass p, Held held, int64_t ranks_per_node = 0) {
  VolumeStats v;
  double words = 0, messages = 0;
  for (int64_t r = 0; r < L.dims().size(); ++r) {
    const PassVolume pv = grid_pass_volume(L, L.dims().coord_of(r), p, held, ranks_per_node);
    v.max_words = std::max(v.max_words, pv.words());
    v.max_messages = std::max(v.max_messages, pv.messages);
    v.max_load = v.max_load.max_with(CommLoad::of(pv));
    words += static_cast<double>(pv.words());
    messages += static_cast<double>(pv.messages);
  }
  v.mean_words = words / static_cast<double>(L.dims().size());
  v.mean_messages = messages / static_cast<double>(L.dims().size());
  return v;
}

TEST(VolumeStats, EqualsEveryRankVisited) {
  const Held helds[] = {Held{}, Held{true, true, true}};
  int checked = 0;
  std::vector<const char*> shapes(std::begin(kAwkwardShapes), std::end(kAwkwardShapes));
  shapes.insert(shapes.end(), std::begin(kAwkwardGroupedShapes), std::end(kAwkwardGroupedShapes));
  for (const char* text : shapes) {
    const ConvShape s = ConvShape::parse(text);
    for (int64_t P : {1, 2, 3, 4, 5, 6, 8, 12, 16, 24}) {
      for (const GridDims& d : all_grids(P)) {
        if (!d.fits(s)) continue;
        const LayerLayout L(s, d);
        for (Pass p : {Pass::forward, Pass::backward_data, Pass::backward_weights}) {
          for (Held held : helds) {
            const VolumeStats want = brute_force(L, p, held);
            const VolumeStats got = pass_volume_stats(L, p, held);
            SCOPED_TRACE(std::string(text) + " grid " + d.to_string() + " " + std::string(pass_name(p)));
            ASSERT_EQ(got.max_words, want.max_words);
            ASSERT_EQ(got.max_messages, want.max_messages);
            ASSERT_DOUBLE_EQ(got.max_load.network_steps, want.max_load.network_steps);
            ASSERT_EQ(got.max_load.network_words, want.max_load.network_words);
            ASSERT_DOUBLE_EQ(got.mean_words, want.mean_words);
            ASSERT_DOUBLE_EQ(got.mean_messages, want.mean_messages);
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

// Nodes of consecutive ranks cut fibres and halos wherever they fall, not where blocks change
// size: the representatives must sample every way a node boundary meets a rank's fibres.
TEST(VolumeStats, LinkLoadsEqualEveryRankVisitedWithNodes) {
  int checked = 0, sampled = 0;
  std::vector<const char*> shapes(std::begin(kAwkwardShapes), std::end(kAwkwardShapes));
  shapes.insert(shapes.end(), std::begin(kAwkwardGroupedShapes), std::end(kAwkwardGroupedShapes));
  // Larger grids, where the representatives are fewer than the ranks.
  shapes.push_back("N=6,C=20,H=29,W=27,K=18,R=3,S=3,pad=1");
  shapes.push_back("N=4,C=16,H=31,W=30,K=24,R=3,S=3,stride=2,pad=1,groups=4");
  for (const char* text : shapes) {
    const ConvShape s = ConvShape::parse(text);
    for (int64_t P : {4, 6, 8, 9, 12, 16, 30, 48, 64}) {
      for (const GridDims& d : all_grids(P)) {
        if (!d.fits(s)) continue;
        const LayerLayout L(s, d);
        for (int64_t node : {2, 3, 4, 5, 8}) {
          for (Pass p : {Pass::forward, Pass::backward_data, Pass::backward_weights}) {
            const VolumeStats want = brute_force(L, p, Held{}, node);
            const VolumeStats got = pass_volume_stats(L, p, Held{}, node);
            SCOPED_TRACE(std::string(text) + " grid " + d.to_string() + " node " + std::to_string(node) + " " +
                         std::string(pass_name(p)));
            ASSERT_EQ(got.max_words, want.max_words);
            ASSERT_EQ(got.max_load.messages, want.max_load.messages);
            ASSERT_DOUBLE_EQ(got.max_load.network_steps, want.max_load.network_steps);
            ASSERT_DOUBLE_EQ(got.max_load.node_steps, want.max_load.node_steps);
            ASSERT_EQ(got.max_load.network_words, want.max_load.network_words);
            ASSERT_EQ(got.max_load.node_words, want.max_load.node_words);
            ++checked;
          }
          sampled += representative_ranks(L, node).size() < static_cast<size_t>(P);
        }
      }
    }
  }
  EXPECT_GT(checked, 50000);
  EXPECT_GT(sampled, 2500);  // grids where the classes, not a visit of every rank, gave the loads
}

}  // namespace
}  // namespace convgrid
