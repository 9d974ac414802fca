// The public cost model (convgrid/cost_model.hpp) on the internal one: model/grid_volume,
// model/volume_stats and model/lower_bound, each pass on its own (nothing held).
#include "convgrid/cost_model.hpp"

#include <fmt/format.h>

#include "convgrid/error.hpp"
#include "layout/layer_layout.hpp"
#include "model/grid_volume.hpp"
#include "model/lower_bound.hpp"
#include "model/volume_stats.hpp"

namespace convgrid {

GridCost grid_cost(const ConvShape& shape, const GridDims& grid, Pass pass) {
  const LayerLayout layout(shape, grid);
  const VolumeStats v = pass_volume_stats(layout, pass, Held{});
  return {v.max_words, v.mean_words, words_lower_bound(shape, grid.size())};
}

int64_t rank_words(const ConvShape& shape, const GridDims& grid, int64_t rank, Pass pass) {
  const LayerLayout layout(shape, grid);
  if (rank < 0 || rank >= grid.size()) {
    throw InputError(fmt::format("rank {} is not on grid {} (ranks 0 to {})", rank, grid.to_string(),
                                 grid.size() - 1));
  }
  return grid_pass_volume(layout, grid.coord_of(rank), pass, Held{}).words();
}

double lower_bound_words(const ConvShape& shape, int64_t P) { return words_lower_bound(shape, P); }

}  // namespace convgrid
