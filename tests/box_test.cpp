// Slices as boxes (layout/box.hpp): for_each_box gives disjoint sub-boxes, in flattening order,
// whose elements are exactly the slice's (checked element by element against for_each_run), at
// most 7 of them, on every flat range of a few boxes.
#include "layout/box.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace convgrid {
namespace {

TEST(Box, SlicesAreAtMostSevenBoxesInFlatteningOrder) {
  const Box4 boxes[] = {
      {{Range{0, 2}, Range{1, 4}, Range{2, 5}, Range{0, 4}}},
      {{Range{3, 4}, Range{0, 5}, Range{0, 1}, Range{1, 8}}},
      {{Range{0, 3}, Range{0, 1}, Range{0, 4}, Range{0, 1}}},
  };
  int64_t checked = 0;
  for (const Box4& b : boxes) {
    const int64_t v = b.volume();
    for (int64_t lo = 0; lo <= v; ++lo) {
      for (int64_t hi = lo; hi <= v; ++hi) {
        const Slice s{b, Range{lo, hi}};
        std::vector<int64_t> expected;  // offsets in b of the slice's elements, in order
        for_each_run(s, [&](int64_t a, int64_t c, int64_t y, int64_t x0, int64_t x1, int64_t) {
          for (int64_t x = x0; x < x1; ++x) expected.push_back(b.offset(a, c, y, x));
        });
        std::vector<int64_t> got;
        int pieces = 0;
        for_each_box(s, [&](const Box4& p) {
          ++pieces;
          EXPECT_FALSE(p.empty());
          for (int64_t a = p.r[0].begin; a < p.r[0].end; ++a) {
            for (int64_t c = p.r[1].begin; c < p.r[1].end; ++c) {
              for (int64_t y = p.r[2].begin; y < p.r[2].end; ++y) {
                for (int64_t x = p.r[3].begin; x < p.r[3].end; ++x) got.push_back(b.offset(a, c, y, x));
              }
            }
          }
        });
        EXPECT_LE(pieces, 7);
        // Boxes in flattening order whose elements, each box row-major, are the slice's in order.
        ASSERT_EQ(got, expected) << "slice [" << lo << ", " << hi << ")";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
}  // namespace convgrid
