// The planner for users of the library: the best processor grid for one convolution layer on P
// ranks, by words received (the busiest rank's, summed over the passes), under an optional
// memory limit per rank, as a plain value (SPEC section 8). Pure; no MPI: every rank that plans
// the same layer gets the same plan.
//
//   PlanRequest request;
//   request.ranks = 4;
//   LayerPlanSummary plan = plan_layer_for(ConvShape::parse("N=8,C=32,H=16,W=16,K=32,R=3,S=3,pad=1"), request);
//   plan.grid.to_string();   // "4,1,1,1,1"
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "convgrid/conv_shape.hpp"
#include "convgrid/grid_dims.hpp"
#include "convgrid/local_conv.hpp"

namespace convgrid {

struct PlanRequest {
  int64_t ranks = 1;
  std::vector<Pass> passes{Pass::forward};   // run in this order as one step
  std::optional<int64_t> memory_limit_bytes;  // per rank
  // Under a memory limit the grid algorithm does not meet: the streamed one, with panels.
  bool allow_streaming = true;
};

struct PassSummary {
  Pass pass = Pass::forward;
  int64_t busiest_rank_words = 0;  // in this pass of the step (operands held from earlier
  double mean_words = 0;           // passes of the step are not received again)
  double lower_bound_words = 0;    // this pass's share of the step's bound, average per rank
};

struct LayerPlanSummary {
  ConvShape shape;
  GridDims grid;
  std::string algorithm = "grid";  // "grid" or "streamed"
  int64_t panels = 0;              // streamed: its panels (>= 1); grid: 0
  std::vector<PassSummary> passes;
  int64_t memory_bytes = 0;        // the largest over ranks

  int64_t words() const;               // sum over passes of the busiest rank's words
  double lower_bound_words() const;    // sum over passes
  std::string to_string() const;       // one line: grid, algorithm, words, bound, memory
};

// The best grid. Throws InputError when ranks < 1, when no grid of that many ranks fits the
// layer, or none fits the memory limit (the message gives the smallest limit that would).
LayerPlanSummary plan_layer_for(const ConvShape& shape, const PlanRequest& request);

// The plan on a given grid (whose size sets the ranks; request.ranks is not read): the grid
// algorithm, or the streamed one when the grid algorithm is over the memory limit.
LayerPlanSummary plan_layer_on(const ConvShape& shape, const GridDims& grid, const PlanRequest& request);

}  // namespace convgrid
