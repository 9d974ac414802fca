// Slices as boxes (layout/box.hpp): for_each_box gives disjoint sub-boxes, in flattening order,
// whose elements are exactly the slice's (its flat range, element by element), at most 7 of them,
// and for_each_run the same elements as rows with their positions in the slice, on every flat
// range of a few boxes. A part of a slice read in place (layout/slice_view.hpp).
#include "layout/box.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "layout/slice_view.hpp"

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
        std::vector<int64_t> expected(static_cast<size_t>(hi - lo));  // offsets in b, in order
        std::iota(expected.begin(), expected.end(), lo);
        std::vector<int64_t> runs;
        for_each_run(s, [&](int64_t a, int64_t c, int64_t y, int64_t x0, int64_t x1, int64_t off) {
          EXPECT_EQ(off, static_cast<int64_t>(runs.size()));
          EXPECT_TRUE(x0 < x1 && x0 >= b.r[3].begin && x1 <= b.r[3].end);
          for (int64_t x = x0; x < x1; ++x) runs.push_back(b.offset(a, c, y, x));
        });
        ASSERT_EQ(runs, expected) << "runs of slice [" << lo << ", " << hi << ")";
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

// A part differing from a whole-box slice in dimensions 0 and 1 is read where it lies: element
// (a, c, y, x) of the part at offset + (a - a0) * lead + its offset within one dense entry of
// dimension 0; anything else is copied.
TEST(SliceView, PartsOfSamplesAndChannelsAreReadInPlace) {
  const Box4 box{{Range{1, 4}, Range{0, 5}, Range{2, 6}, Range{0, 3}}};
  const Slice whole = Slice::whole(box);
  for (const Box4& part : {Box4{{Range{1, 4}, Range{1, 3}, Range{2, 6}, Range{0, 3}}},
                           Box4{{Range{2, 3}, Range{0, 5}, Range{2, 6}, Range{0, 3}}},
                           Box4{{Range{2, 4}, Range{4, 5}, Range{2, 6}, Range{0, 3}}}}) {
    const std::optional<SliceView> v = view_in_slice(whole, part);
    ASSERT_TRUE(v.has_value());
    const bool dense = part.r[1] == box.r[1];
    EXPECT_EQ(v->lead, dense ? 0 : box.extent(1) * box.extent(2) * box.extent(3));
    const int64_t step = v->lead != 0 ? v->lead : part.extent(1) * part.extent(2) * part.extent(3);
    for (int64_t a = part.r[0].begin; a < part.r[0].end; ++a) {
      for (int64_t c = part.r[1].begin; c < part.r[1].end; ++c) {
        for (int64_t y = part.r[2].begin; y < part.r[2].end; ++y) {
          for (int64_t x = part.r[3].begin; x < part.r[3].end; ++x) {
            Box4 entry = part;
            entry.r[0] = Range{a, a + 1};
            const int64_t at = v->offset + (a - part.r[0].begin) * step + entry.offset(a, c, y, x);
            EXPECT_EQ(at, box.offset(a, c, y, x));
          }
        }
      }
    }
    EXPECT_EQ(panel_in_place({whole}, part, false).has_value(), dense);
    EXPECT_TRUE(panel_in_place({whole}, part, true).has_value());
    EXPECT_FALSE(panel_in_place({whole, whole}, part, true).has_value());  // a fibre of two gathers
  }
  // Rows or columns cut, a part outside the box, a slice that is not its whole box.
  EXPECT_FALSE(view_in_slice(whole, Box4{{Range{1, 4}, Range{0, 5}, Range{3, 6}, Range{0, 3}}}));
  EXPECT_FALSE(view_in_slice(whole, Box4{{Range{1, 4}, Range{0, 5}, Range{2, 6}, Range{0, 2}}}));
  EXPECT_FALSE(view_in_slice(whole, Box4{{Range{0, 4}, Range{0, 5}, Range{2, 6}, Range{0, 3}}}));
  EXPECT_FALSE(view_in_slice(Slice{box, Range{0, box.volume() - 1}}, box));
}

}  // namespace
}  // namespace convgrid
