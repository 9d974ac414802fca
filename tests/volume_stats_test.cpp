// The planner's per-grid statistics (largest and mean words and messages over ranks) against a
// brute-force visit of every rank with grid_pass_volume: equal, exactly, on awkward shapes and
// every grid of up to 24 ranks, for each pass with and without held operands.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "model/volume_stats.hpp"
#include "awkward_shapes.hpp"

namespace convgrid {
namespace {

using ::convgrid::test_data::kAwkwardGroupedShapes;
using ::convgrid::test_data::kAwkwardShapes;

VolumeStats brute_force(const LayerLayout& L, Pass p, Held held) {
  VolumeStats v;
  double words = 0, messages = 0;
  for (int64_t r = 0; r < L.dims().size(); ++r) {
    const PassVolume pv = grid_pass_volume(L, L.dims().coord_of(r), p, held);
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

}  // namespace
}  // namespace convgrid
