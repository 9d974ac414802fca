// The planner for one layer (SPEC section 8, STYLE "Choosing and dispatching"): every 5-factor
// grid of P ranks that fits the layer, minus those over the per-rank memory limit; the cheapest
// by words received (the busiest rank's, summed over the passes) or by modelled time; ties go to
// the grid with the larger (Pn, Pk, Pc, Ph) in that order (data parallelism first), so every rank
// that plans picks the same grid. Pure; no MPI.
//
// Speed: the exact mean over ranks of every grid is cheap and never exceeds the largest, so grids
// are visited in increasing order of it and the search stops when it reaches the best found.
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "convgrid/conv_shape.hpp"
#include "convgrid/local_conv.hpp"
#include "convgrid/grid_dims.hpp"
#include "memory/byte_sizes.hpp"  // the limits and figures planners report
#include "model/machine_profile.hpp"
#include "model/volume_stats.hpp"

namespace convgrid {

enum class Objective { volume, time };

struct PlanOptions {
  int64_t procs = 1;
  std::vector<Pass> passes{Pass::forward};  // run in this order as one step
  Objective objective = Objective::volume;
  MachineProfile profile;                       // for modelled times (and the time objective)
  std::optional<int64_t> mem_per_rank_bytes;    // the limit, when there is one
  // Under a memory limit the grid algorithm does not meet, the streamed algorithm (SPEC section
  // 5) with the fewest panels that meets it; its panels run in `stream_pieces` chunks each.
  bool allow_streaming = true;
  int64_t stream_pieces = 4;
  // The local engine whose own copies count in the memory (oneDNN, as convgrid conv runs).
  Backend engine = Backend::onednn;
};

struct PassFigures {
  Pass pass;
  VolumeStats volume;
  double lower_bound_words = 0;  // memory-independent, average per rank, for the pass in its step
                                 // (words_lower_bound_in_step)
  double time_s = 0;             // modelled, at the busiest rank's figures
};

// The algorithm a plan runs (algo/dist_conv.hpp builds it): the grid algorithm, its streamed
// form (panels > 0), or the reproducible data-parallel one (training with reproducible
// arithmetic; the planners never choose it).
enum class ConvAlgorithm { grid, streamed, reproducible };
std::string_view to_string(ConvAlgorithm algorithm);

struct LayerPlan {
  ConvShape shape;
  GridDims grid;
  ConvAlgorithm algorithm = ConvAlgorithm::grid;
  int64_t panels = 0;  // streamed: b >= 1 panels (nothing held); else 0
  std::vector<PassFigures> passes;
  int64_t memory_bytes = 0;  // the largest over ranks (model/grid_memory.hpp)

  std::vector<Pass> pass_list() const;  // the passes it runs, in order
  int64_t words() const;   // sum over passes of the busiest rank's words
  double time_s() const;   // sum over passes of the modelled times
  double objective(Objective o) const { return o == Objective::volume ? static_cast<double>(words()) : time_s(); }
};

// The figures of one grid (which must fit the layer), its passes timed without overlap.
LayerPlan evaluate_grid(const ConvShape& shape, const GridDims& grid, const PlanOptions& options);

// The figures of the streamed algorithm on a grid with `panels` panels: words as the grid
// algorithm's with nothing held, messages and memory of the streamed one (the largest over ranks).
LayerPlan evaluate_streamed(const ConvShape& shape, const GridDims& grid, const PlanOptions& options,
                            int64_t panels);

// The plan on a given grid under the options' memory limit: the grid algorithm when it fits, else
// the streamed one with the fewest panels that fits. InputError when neither does.
LayerPlan plan_on_grid(const ConvShape& shape, const GridDims& grid, const PlanOptions& options);

// Every plan a grid of P ranks that fits the layer offers, the memory limit aside: the grid
// algorithm, and the streamed one with 1, 2, 4, ... panels up to panels of one element (the
// words-against-memory trade-off of SPEC section 5). InputError as plan_layer's.
std::vector<LayerPlan> memory_tradeoff(const ConvShape& shape, const PlanOptions& options);

// The best grid. Throws InputError when P < 1, when no grid of P ranks fits the layer, or when
// none fits the memory limit (then the message gives the smallest limit that would work).
LayerPlan plan_layer(const ConvShape& shape, const PlanOptions& options);

// The `count` best grids among those `allowed` accepts (all when it is empty), best first, in
// the order plan_layer breaks ties; the same errors, and InputError when `allowed` accepts no
// grid that fits the layer.
using GridFilter = std::function<bool(const GridDims&)>;
std::vector<LayerPlan> best_layer_plans(const ConvShape& shape, const PlanOptions& options,
                                        size_t count, const GridFilter& allowed = {});

// The least memory per rank any grid of P ranks (that `allowed` accepts) needs for the layer: the
// smallest --mem-per-rank under which plan_layer finds a grid. InputError as plan_layer's.
int64_t smallest_memory_bytes(const ConvShape& shape, const PlanOptions& options,
                              const GridFilter& allowed = {});

}  // namespace convgrid
