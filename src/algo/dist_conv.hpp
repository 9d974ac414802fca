// One interface for the distributed convolution, whichever algorithm a plan names, and the one
// factory that builds it (SPEC sections 4 and 5). What moves over which fibre is each
// implementation's own (algo/grid_conv.hpp, algo/streamed_conv.hpp, algo/reproducible_conv.hpp);
// every one reads and writes this rank's at-rest slices of LayerLayout(shape, grid) and adds what
// it received to the caller's TrafficCounter.
//
// The model of the same algorithm sits beside it: the words a rank receives in each pass of a
// training step (forward, backward-data, backward-weights, in that order from new_step()) and the
// bytes it holds, from the plan alone (no MPI), so that the memory model and the planners read
// the same figures the running layer is tested against.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "algo/grid_conv.hpp"
#include "comm/traffic.hpp"
#include "convgrid/local_conv.hpp"
#include "grid/process_grid.hpp"
#include "layout/layer_layout.hpp"
#include "plan/layer_planner.hpp"

namespace convgrid {

class DistConv {
 public:
  virtual ~DistConv() = default;

  virtual const LayerLayout& layout() const = 0;
  virtual void forward(const float* in, const float* ker, float* out, TrafficCounter& traffic) = 0;
  virtual void backward_data(const float* dout, const float* ker, float* din,
                             TrafficCounter& traffic) = 0;
  virtual void backward_weights(const float* dout, const float* in, float* dker,
                                TrafficCounter& traffic) = 0;
  // Forgets operands kept from earlier passes (call when the data changes: every step).
  virtual void new_step() {}
  // Communication and compute seconds of the last pass (zero where the algorithm does not time).
  virtual const PassSeconds& last_seconds() const = 0;
};

// Builds plan.algorithm on `grid` (whose dims must be plan.grid). `local_work` false: the
// streamed algorithm's communication alone (bench). Throws InputError when the plan cannot run
// (a reproducible plan on a grid that splits more than samples).
std::unique_ptr<DistConv> make_dist_conv(const LayerPlan& plan, const ProcessGrid& grid,
                                         Backend backend = Backend::onednn, bool local_work = true);

// The words the rank at `g` receives in pass p of a training step that runs `passes` in order
// (what the algorithm holds from earlier passes of the step counts), for plan.algorithm.
int64_t modelled_words(const LayerPlan& plan, const LayerLayout& layout, GridCoord g, Pass p,
                       const std::vector<Pass>& passes);
// The same with its messages and link split (the grid and streamed algorithms).
PassVolume modelled_pass_volume(const LayerPlan& plan, const LayerLayout& layout, GridCoord g,
                                Pass p, const std::vector<Pass>& passes,
                                int64_t ranks_per_node = 0);

// The bytes the rank at `g` holds when the algorithm runs `passes`, its at-rest slices included
// (model/grid_memory.hpp, model/streamed_memory.hpp; the reproducible algorithm as the grid one
// on its data-parallel grid, which it equals but for per-sample engines and double sums).
int64_t modelled_memory_bytes(const LayerPlan& plan, const LayerLayout& layout, GridCoord g,
                              const std::vector<Pass>& passes, Backend engine = Backend::onednn);
// The same less the at-rest slices of the tensors `passes` read and write (each once): what the
// algorithm holds beyond the caller's storage.
int64_t modelled_algorithm_bytes(const LayerPlan& plan, const LayerLayout& layout, GridCoord g,
                                 const std::vector<Pass>& passes, Backend engine = Backend::onednn);

}  // namespace convgrid
