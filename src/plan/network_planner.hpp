// The planner for a whole network (SPEC section 8): a grid for every convolution and fully
// connected layer, chosen by dynamic programming over the layers, where moving an activation
// from one layer's distribution to the next one's costs the exact words of its redistribution
// (model/redistribution.hpp). Pure; no MPI.
//
// The graph. Each compute layer reads the output of its source compute layer (through relu,
// pooling and flatten layers, which run in the source's output distribution: see
// Placement::pooled_output_of); a residual add (ResNet shortcut) joins the shortcut's producer's
// output to the output of the layer before the add, in that layer's distribution; a concat joins
// its operands in the grid of the layer that wrote the first one (Placement::joined), each
// operand one edge, and its readers read it there. The network's
// input arrives in the first layer's input distribution (the data loader reads each rank's
// slice), and the last layer's output stays where it is. Every edge is one all-to-all.
//
// The dynamic programme. Layers are taken in network order; the state is the grids of the
// compute layers whose outputs later edges still read (one in a chain, two inside a ResNet
// block), so the choice is optimal over the candidate grids of every layer: the `candidates`
// cheapest grids of the layer on its own, plus the data-parallel grid when it fits. With the
// train passes an edge costs its forward words (activation) plus its backward words (the
// gradient going back); with the time objective, alpha + 4 * beta * words per edge.
//
// Totals are sums over layers and edges of the busiest rank's figures (an upper bound on the
// busiest rank's sum; for the uniform data-parallel grid they are equal).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/network.hpp"
#include "model/step_collectives.hpp"
#include "plan/layer_planner.hpp"

namespace convgrid {

// Which grids a plan may use. A layer that no grid of the family fits (a 1x1 fully connected
// layer cannot be split spatially; conv1 has 3 channels) falls back to every grid, and is
// marked so.
struct CandidateCache;  // network_planner.cpp

enum class GridFamily {
  any,             // every 5-factor grid (the planner)
  data_parallel,   // Pn = P
  batch_spatial,   // Pk = Pc = 1: batch x spatial hybrids (data parallelism included)
  channel_filter,  // Pn = Ph = Pw = 1: channel and filter parallelism
};

std::string_view to_string(GridFamily family);

struct NetworkPlanOptions {
  PlanOptions layer;  // procs, passes, objective, profile, memory limit (per layer)
  int64_t batch = 1;
  GridFamily family = GridFamily::any;
  int candidates = 6;  // per layer, besides data parallelism
  // Per compute layer (in order), a memory limit of its own in place of layer.mem_per_rank_bytes
  // (0: that one); empty: none (the training memory search, train/training_plan.hpp).
  std::vector<int64_t> layer_limits;
  // Each layer's candidate grids under each limit, kept between calls (make_candidate_cache()).
  // Share one only between options that differ in nothing but their layer limits.
  std::shared_ptr<CandidateCache> cache;
};

std::shared_ptr<CandidateCache> make_candidate_cache();

// The grids a layer may use: those of the family, or every grid (an empty filter) when the
// family is `any` or none of its grids fits the layer (then `fallback` is set).
GridFilter family_filter(GridFamily family, const ConvShape& shape, int64_t procs, bool& fallback);

// The redistribution of one activation into a layer: from `from_layer`'s output.
struct EdgeFigures {
  std::string from_layer;
  size_t from_index = 0;      // the compute layer it leaves, in order
  Activation pooled;          // the activation as it leaves: from_layer's output, maybe pooled
  bool residual = false;      // the shortcut of a residual add (else the layer's input)
  bool gate = false;          // the gate of a scale whose input lies in this layer's output
  std::string concat;         // an operand of this concat, joined in this layer's grid (else "")
  int64_t words_max = 0;      // busiest rank, the passes' directions summed
  double words_mean = 0;
  double time_s = 0;          // modelled, busiest rank
};

struct NetworkLayerPlan {
  std::string name;                      // the layer's name in the network
  LayerPlan plan;                        // its grid and per-pass figures
  bool fallback = false;                 // no grid of the family fits: planned over every grid
  // redistributions into this layer (input, shortcut, operands of concats joined in its grid,
  // gates of scales whose input it wrote)
  std::vector<EdgeFigures> edges_in;
  // The batch normalizations that run in this layer's output blocks (model/batch_norm_volume.hpp):
  // the busiest rank's words of each, summed, and their modelled time.
  int64_t norm_words = 0;
  double norm_time_s = 0;
  int64_t data_parallel_norm_words = 0;  // the same on the data-parallel grid
  std::optional<LayerPlan> data_parallel;  // the same layer on Pn = P, when P <= N

  int64_t redistribution_words() const;  // sum of edges_in's words_max
  double redistribution_time_s() const;
};

struct NetworkPlan {
  std::string network;
  int64_t batch = 0;
  int64_t procs = 0;
  GridFamily family = GridFamily::any;
  std::vector<NetworkLayerPlan> layers;  // compute layers in network order

  int64_t layer_words() const;           // sum over layers of LayerPlan::words()
  int64_t redistribution_words() const;  // sum over edges
  int64_t norm_words() const;            // sum over layers of NetworkLayerPlan::norm_words
  int64_t words() const { return layer_words() + redistribution_words() + norm_words(); }
  double time_s() const;                 // layers' and edges' modelled times
  // The rest of a training step: the loss's and the biases' all-reduces over all ranks
  // (model/step_collectives.hpp), the same for every plan of P ranks; none for inference. With
  // them, the words and modelled time of the whole step `convgrid train` runs (less the first
  // layer's backward-data pass, which training skips and the plan keeps: docs/scale.md).
  StepCollectives collectives;
  int64_t step_words() const { return words() + collectives.words(); }
  double step_time_s() const { return time_s() + collectives.time_s(); }
  double lower_bound_words() const;      // sum over layers and passes of the lower bound
  int64_t memory_bytes() const;          // the largest layer's
  std::vector<LayerPlan> layer_plans() const;  // each layer's plan, in order (as DistNet takes them)
  // Words data parallelism would receive (no redistribution: every layer has the same grid;
  // batch norm's all-reduces included); none when P > N.
  std::optional<int64_t> data_parallel_words() const;
};

// The passes compute layer `c` runs in a step of `passes`: all of them, but backward-data for the
// layer that reads the network's input (no gradient of the data is wanted; training skips it).
std::vector<Pass> passes_in_network(const ComputeLayer& c, const std::vector<Pass>& passes);

// The plans plan_network chooses among for compute layer `index` (its own limit applied), best
// first; from options.cache when set. InputError when no grid fits under the limit.
std::vector<LayerPlan> layer_candidates(const Network& net, const NetworkPlanOptions& options, size_t index);

// Plans every compute layer of `net` at the given batch. Throws InputError when the batch or P
// is out of range, when a layer has no grid of P ranks, or when a layer fits under no grid in
// the memory limit (the message names the layer and the smallest limit that works for it).
NetworkPlan plan_network(const Network& net, const NetworkPlanOptions& options);

}  // namespace convgrid
