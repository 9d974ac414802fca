// Tests of GridDims: parsing, the row-major rank order against nested loops, the nhw-fibre index,
// all_grids(P) against a brute-force enumeration, and the validation errors.
#include "convgrid/grid_dims.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "throws_input_error.hpp"

namespace convgrid {
namespace {

TEST(GridDims, ParsesAndPrints) {
  const GridDims g = GridDims::parse("2,1,3,4,5");
  EXPECT_EQ(g, (GridDims{2, 1, 3, 4, 5}));
  EXPECT_EQ(g.to_string(), "2,1,3,4,5");
  EXPECT_EQ(g.size(), 120);
  EXPECT_EQ(GridDims::parse(g.to_string()), g);
  EXPECT_EQ(GridDims::parse("1,1,1,1,1"), GridDims{});
  EXPECT_EQ(GridDims::parse("1,1,1,1,2147483648").Pw, int64_t{1} << 31);
}

TEST(GridDims, RejectsBadStrings) {
  const std::pair<const char*, const char*> bad[] = {
      {"", "five extents"},
      {"1,1,1,1", "five extents"},
      {"1,1,1,1,1,1", "five extents"},
      {"1,1,1,1,1,", "five extents"},
      {"1,,1,1,1", "extent ''"},
      {"0,1,1,1,1", "extent '0'"},
      {"1,-2,1,1,1", "extent '-2'"},
      {"1,1,a,1,1", "extent 'a'"},
      {"1,1,1,2x,1", "extent '2x'"},
      {"1,1,1,1,2147483649", "extent '2147483649'"},
  };
  for (auto& [text, what] : bad) {
    EXPECT_TRUE(throws_input_error([&] { GridDims::parse(text); }, {what})) << text;
  }
}

TEST(GridDims, RankOrderIsRowMajorWithPwFastest) {
  for (const GridDims& g : {GridDims{}, GridDims{2, 3, 1, 2, 2}, GridDims{1, 4, 3, 1, 5},
                            GridDims{3, 1, 2, 5, 1}, GridDims{2, 2, 2, 2, 2}}) {
    int64_t rank = 0;
    for (int64_t n = 0; n < g.Pn; ++n)
      for (int64_t k = 0; k < g.Pk; ++k)
        for (int64_t c = 0; c < g.Pc; ++c)
          for (int64_t h = 0; h < g.Ph; ++h)
            for (int64_t w = 0; w < g.Pw; ++w, ++rank) {
              const GridCoord coord{n, k, c, h, w};
              EXPECT_EQ(g.rank_of(coord), rank) << g.to_string();
              EXPECT_EQ(g.coord_of(rank), coord) << g.to_string() << " rank " << rank;
            }
    EXPECT_EQ(rank, g.size());
  }
}

TEST(GridDims, NhwIndexNumbersEachFibre) {
  // Within a fibre (fixed pk, pc) the indices are 0 .. nhw_size()-1, each once.
  const GridDims g{2, 3, 2, 3, 2};
  ASSERT_EQ(g.nhw_size(), 12);
  for (int64_t k = 0; k < g.Pk; ++k)
    for (int64_t c = 0; c < g.Pc; ++c) {
      std::vector<int> seen(static_cast<size_t>(g.nhw_size()), 0);
      for (int64_t r = 0; r < g.size(); ++r) {
        const GridCoord coord = g.coord_of(r);
        if (coord.k == k && coord.c == c) ++seen.at(static_cast<size_t>(g.nhw_index(coord)));
      }
      EXPECT_EQ(seen, std::vector<int>(12, 1));
    }
}

// Every (a, b, c, d, e) in [1, P]^5 with a*b*c*d*e == P, lexicographically ordered.
std::vector<GridDims> brute_force_grids(int64_t P) {
  std::vector<GridDims> out;
  for (int64_t a = 1; a <= P; ++a)
    for (int64_t b = 1; b <= P; ++b)
      for (int64_t c = 1; c <= P; ++c)
        for (int64_t d = 1; d <= P; ++d) {
          const int64_t abcd = a * b * c * d;
          if (P % abcd == 0) out.push_back({a, b, c, d, P / abcd});
        }
  return out;
}

TEST(AllGrids, MatchesBruteForce) {
  // Counts by stars and bars: 2 = 2^1 -> C(5,4) = 5; 12 = 2^2 * 3 -> C(6,4) * C(5,4) = 75;
  // 64 = 2^6 -> C(10,4) = 210.
  const std::pair<int64_t, size_t> cases[] = {{1, 1}, {2, 5}, {12, 75}, {64, 210}};
  for (auto [P, count] : cases) {
    const std::vector<GridDims> grids = all_grids(P);
    EXPECT_EQ(grids.size(), count) << "P=" << P;
    EXPECT_EQ(grids, brute_force_grids(P)) << "P=" << P;
  }
}

TEST(GridDims, ValidateForRejectsExtentsLargerThanTheirDimension) {
  const ConvShape s = ConvShape::parse("N=2,C=3,H=5,W=5,K=4,R=3,S=3");  // Ho = Wo = 3
  EXPECT_NO_THROW((GridDims{2, 4, 3, 3, 3}.validate_for(s)));
  const std::pair<GridDims, const char*> bad[] = {
      {{3, 1, 1, 1, 1}, "Pn=3 is larger than N=2"},  {{1, 5, 1, 1, 1}, "Pk=5 is larger than K=4"},
      {{1, 1, 4, 1, 1}, "Pc=4 is larger than C=3"},  {{1, 1, 1, 4, 1}, "Ph=4 is larger than Ho=3"},
      {{1, 1, 1, 1, 4}, "Pw=4 is larger than Wo=3"}, {{1, 0, 1, 1, 1}, "Pk=0 must be at least 1"},
  };
  for (auto& [g, what] : bad) {
    EXPECT_TRUE(throws_input_error([&] { g.validate_for(s); }, {g.to_string(), what}));
  }
}

TEST(GridDims, GroupedLayersSplitGroupsOverTheKFibreFirst) {
  // G=4 groups of C/G=2 input and K/G=3 output channels.
  const ConvShape s = ConvShape::parse("N=2,C=8,H=5,W=5,K=12,R=3,S=3,groups=4");
  for (const GridDims g : {GridDims{1, 2, 1, 1, 1}, GridDims{1, 3, 1, 1, 1}, GridDims{1, 4, 2, 1, 1},
                           GridDims{1, 8, 2, 1, 1}, GridDims{1, 12, 1, 1, 1}}) {
    EXPECT_NO_THROW(g.validate_for(s)) << g.to_string();
    EXPECT_TRUE(g.fits(s)) << g.to_string();
  }
  const std::pair<GridDims, const char*> bad[] = {
      {{1, 2, 2, 1, 1}, "Pc=2 with Pk=2 < groups=4"},
      {{1, 6, 1, 1, 1}, "Pk=6 with groups=4: Pk must be at most 4 or a multiple of it"},
      {{1, 16, 1, 1, 1}, "Pk=16 is larger than K=12"},
      {{1, 4, 3, 1, 1}, "Pc=3 is larger than C/groups=2"},
  };
  for (auto& [g, what] : bad) {
    EXPECT_FALSE(g.fits(s)) << g.to_string();
    EXPECT_TRUE(throws_input_error([&] { g.validate_for(s); }, {g.to_string(), what}));
  }
}

TEST(GridDims, ValidateSizeNamesBothCounts) {
  const GridDims g{2, 1, 1, 2, 1};
  EXPECT_NO_THROW(g.validate_size(4));
  EXPECT_TRUE(throws_input_error([&] { g.validate_size(3); },
                                 {"grid 2,1,1,2,1 has 4 ranks but the job has 3"}));
}

}  // namespace
}  // namespace convgrid
