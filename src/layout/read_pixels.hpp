// Which input rows and columns at least one output of a layer reads. With a stride larger than
// the dilated filter (a 1x1 filter at stride 2, say) some rows and columns are never read; they
// are never communicated. A pixel is read iff its row and its column are. Pure; no MPI.
#pragma once

#include <cstdint>
#include <vector>

#include "convgrid/conv_shape.hpp"
#include "layout/range.hpp"

namespace convgrid {

class ReadPixels {
 public:
  explicit ReadPixels(const ConvShape& s);

  bool row(int64_t y) const { return row_read_[y] != 0; }
  bool col(int64_t x) const { return col_read_[x] != 0; }
  // Number of read rows (columns) in a range of rows (columns) of the image.
  int64_t rows_in(Range r) const { return r.empty() ? 0 : row_prefix_[r.end] - row_prefix_[r.begin]; }
  int64_t cols_in(Range r) const { return r.empty() ? 0 : col_prefix_[r.end] - col_prefix_[r.begin]; }
  bool all_read() const { return all_read_; }

 private:
  std::vector<char> row_read_, col_read_;
  std::vector<int64_t> row_prefix_, col_prefix_;
  bool all_read_ = true;
};

}  // namespace convgrid
