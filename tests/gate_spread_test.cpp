// Tests of where a scale layer wants its gate (model/gate_spread.hpp): the figures of moving the
// gate against counting every rank's received words one pair of ranks at a time, on every pair of
// grids of 1 to 8 ranks for the gate's layer (a convolution on 1 x 1 images) and the scale's input
// (a convolution's output, whole or pooled, and a concat's joined placement), and the sum of every
// rank's wanted gate against adding the ranks up one by one.
#include "model/gate_spread.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "convgrid/error.hpp"
#include "convgrid/grid_dims.hpp"

namespace convgrid {
namespace {

// Words each rank receives, forward (its wanted gate less what it holds) and backward (what the
// other ranks want of what it holds), one pair of ranks at a time.
struct Brute {
  std::vector<int64_t> forward, backward;
};

Brute brute(const Placement& gate, const Placement& main) {
  const int64_t P = main.dims().size();
  Brute b{std::vector<int64_t>(P), std::vector<int64_t>(P)};
  const Box4 t = gate.tensor();
  for (int64_t r = 0; r < P; ++r) {
    const Slice held = gate.slice(r), wanted = gate_wanted(main, r);
    b.forward[r] = wanted.size() - slice_overlap(wanted, t, held, t);
    for (int64_t q = 0; q < P; ++q) {
      if (q != r) b.backward[r] += slice_overlap(held, t, gate_wanted(main, q), t);
    }
  }
  return b;
}

// The layout of `shape` on `g`, or none where the grid has more blocks than the layer has
// samples, channels, rows or columns.
std::optional<LayerLayout> valid_layout(const ConvShape& shape, const GridDims& g) {
  try {
    return LayerLayout(shape, g);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

void expect_stats(const RedistributionStats& s, const std::vector<int64_t>& words) {
  int64_t total = 0;
  for (int64_t w : words) total += w;
  EXPECT_EQ(s.max_words, *std::max_element(words.begin(), words.end()));
  EXPECT_DOUBLE_EQ(s.mean_words, static_cast<double>(total) / static_cast<double>(words.size()));
  EXPECT_EQ(s.max_load.messages, words.size() > 1 && s.max_words > 0 ? 1 : 0);
}

TEST(GateSpread, FiguresCountEveryPairOfRanks) {
  // N = 5 samples and C = 6 channels: uneven blocks on most grids; the input 5 x 3 (rows split
  // past their count at Ph > 5 of a pooled 2 x 2).
  const ConvShape gate_conv = ConvShape::parse("N=5,C=2,H=1,W=1,K=6,R=1,S=1");
  const ConvShape main_conv = ConvShape::parse("N=5,C=3,H=5,W=3,K=6,R=3,S=3,pad=1");
  int compared = 0, summed = 0;
  for (int64_t P = 1; P <= 8; ++P) {
    for (const GridDims& ga : all_grids(P)) {
      const auto gate_layout = valid_layout(gate_conv, ga);
      if (!gate_layout) continue;
      const Placement gate = Placement::pooled_output_of(*gate_layout, 1, 1);
      for (const GridDims& gb : all_grids(P)) {
        const auto valid_main = valid_layout(main_conv, gb);
        if (!valid_main) continue;
        const LayerLayout& main_layout = *valid_main;
        const Placement mains[] = {Placement::output_of(main_layout), Placement::pooled_output_of(main_layout, 2, 2),
                                   Placement::joined(gb, Box4{{Range{0, 5}, Range{0, 6}, Range{0, 5}, Range{0, 3}}})};
        for (const Placement& main : mains) {
          SCOPED_TRACE(ga.to_string() + " -> " + gb.to_string());
          const Brute b = brute(gate, main);
          const RedistributionFigures f = gate_figures(gate, main);
          expect_stats(f.forward, b.forward);
          expect_stats(f.backward, b.backward);
          ++compared;
          if (const auto sum = gate_wanted_sum(main)) {
            ++summed;
            for (int64_t r = 0; r < P; ++r) {
              int64_t want = 0;
              for (int64_t q = 0; q < P; ++q) {
                want += slice_overlap(gate.slice(r), gate.tensor(), gate_wanted(main, q), gate.tensor());
              }
              EXPECT_EQ(sum->overlap(gate.slice(r)), want) << "rank " << r;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 900);
  EXPECT_GT(summed, compared / 2) << "the sum should exist on most grids";
}

// When the gate's grid holds exactly what each rank wants, nothing moves; on a grid that splits
// rows, every block of rows wants the gate of its samples and channels again.
TEST(GateSpread, SpatialSplitsWantTheGateAgain) {
  const ConvShape gate_conv = ConvShape::parse("N=4,C=2,H=1,W=1,K=8,R=1,S=1");
  const ConvShape main_conv = ConvShape::parse("N=4,C=8,H=6,W=6,K=8,R=1,S=1");
  const auto figures = [&](GridDims a, GridDims b) {
    return gate_figures(Placement::output_of(LayerLayout(gate_conv, a)), Placement::output_of(LayerLayout(main_conv, b)));
  };
  const RedistributionFigures same = figures({4, 1, 1, 1, 1}, {4, 1, 1, 1, 1});
  EXPECT_EQ(same.forward.max_words, 0);
  EXPECT_EQ(same.backward.max_words, 0);
  // The gate's layer splits channels over 4 ranks (8 values each), the scale's input rows over 4:
  // every rank wants all 32 gate values and holds 8 (receives 24); backward, the other 3 ranks
  // send it their partial sums of its 8 (24).
  const RedistributionFigures rows = figures({1, 4, 1, 1, 1}, {1, 1, 1, 4, 1});
  EXPECT_EQ(rows.forward.max_words, 24);
  EXPECT_DOUBLE_EQ(rows.forward.mean_words, 24);
  EXPECT_EQ(rows.backward.max_words, 24);
  EXPECT_DOUBLE_EQ(rows.backward.mean_words, 24);
  const auto sum = gate_wanted_sum(Placement::output_of(LayerLayout(main_conv, {1, 1, 1, 4, 1})));
  ASSERT_TRUE(sum.has_value());
  EXPECT_EQ(sum->overlap(Box4{{Range{0, 4}, Range{0, 8}, Range{0, 1}, Range{0, 1}}}), 4 * 32);
}

}  // namespace
}  // namespace convgrid
