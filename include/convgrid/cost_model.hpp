// The cost model of the grid algorithm for users of the library: the words a rank receives in
// one pass of a layer on a processor grid, the busiest rank's, and the lower bound every plan is
// measured against (SPEC sections 6 and 7). Pure; no MPI. Words are float32 elements received.
//
// Each figure is for one pass run on its own (nothing held from an earlier pass of a step); the
// planner (convgrid/planner.hpp) gives the figures of whole steps.
#pragma once

#include <cstdint>

#include "convgrid/conv_shape.hpp"
#include "convgrid/grid_dims.hpp"
#include "convgrid/local_conv.hpp"

namespace convgrid {

struct GridCost {
  int64_t busiest_rank_words = 0;  // the largest over ranks
  double mean_words = 0;           // the mean over ranks
  double lower_bound_words = 0;    // average per rank, any algorithm on grid.size() ranks
};

// The figures of `pass` on `grid`. Throws InputError when the grid does not fit the layer.
GridCost grid_cost(const ConvShape& shape, const GridDims& grid, Pass pass);

// The words grid rank `rank` (row-major over Pn..Pw, convgrid/grid_dims.hpp) receives in `pass`.
// Throws InputError when the grid does not fit the layer or the rank is not on it.
int64_t rank_words(const ConvShape& shape, const GridDims& grid, int64_t rank, Pass pass);

// The memory-independent lower bound on the average words per rank of one pass on P ranks.
// Throws InputError when P < 1.
double lower_bound_words(const ConvShape& shape, int64_t P);

}  // namespace convgrid
