// Words and messages each rank receives in the grid algorithm (SPEC sections 4 and 6), computed
// from the block arithmetic alone: it never looks at what the communication layer sent, so the
// run-time counts can be checked against it to the word.
//
// Counting rules (the same the communication layer applies):
//   all-gather over q ranks    : the other q-1 slices (only read pixels for In);
//   reduce-scatter over q ranks: q-1 contributions to the rank's own slice;
//   halo (point to point)      : the elements received;
//   messages                   : one per collective on a fibre of more than one rank, one per
//                                non-empty point-to-point receive;
//   latency steps (for time)   : the rounds of messages those take in MPI's algorithms
//                                (model/collective_rounds.hpp: Open MPI's choice of all-gather
//                                and reduce-scatter by size), one per point-to-point
//                                receive. Not counted at run time: the time model's, checked
//                                against simulation (docs/scale.md).
//   node words and steps       : the part of the words and rounds over links inside a node when
//                                `ranks_per_node` consecutive ranks share one
//                                (model/node_links.hpp); 0 without a node level.
#pragma once

#include <cstdint>

#include "convgrid/local_conv.hpp"
#include "layout/layer_layout.hpp"

namespace convgrid {

struct PassVolume {
  int64_t all_gather = 0;
  int64_t reduce_scatter = 0;
  int64_t point_to_point = 0;
  int64_t messages = 0;
  int64_t latency_steps = 0;
  int64_t node_words = 0;  // of words(), those over links inside a node
  double node_steps = 0;   // of latency_steps, the rounds at the node's latency (a pipelined
                           // ring: the share of its edges inside a node)
  int64_t surplus_words = 0;       // moved beyond the counted words (a reduce-scatter's fold over
                                   // a fibre that is not a power of two): time only
  int64_t surplus_node_words = 0;  // of surplus_words, those over links inside a node

  int64_t words() const { return all_gather + reduce_scatter + point_to_point; }
};

// The figures of a pass the time model reads, split by link (network: between nodes). For the
// busiest rank of a grid each is the largest over ranks (max_load): an upper estimate when
// different ranks attain them.
struct CommLoad {
  int64_t messages = 0;
  double network_steps = 0, node_steps = 0;
  int64_t network_words = 0, node_words = 0;

  static CommLoad of(const PassVolume& v);
  // Each figure the larger of the two.
  CommLoad max_with(const CommLoad& o) const;
};

// Gathered operands a pass finds already in place from earlier passes of the same step:
// the haloed input (forward), the weight block (forward), the output-gradient block
// (backward-data). A pass gathers what is not held.
struct Held {
  bool in_needed = false;
  bool ker_block = false;
  bool dout_block = false;
};

// What rank g receives in one pass; `ranks_per_node` splits it by link (0: no node level).
PassVolume grid_pass_volume(const LayerLayout& layout, GridCoord g, Pass pass, Held held,
                            int64_t ranks_per_node = 0);

// What each pass leaves held for the next when the passes run in order forward, backward-data,
// backward-weights (a training step) starting from `before`.
Held held_after(Pass pass, Held before);

}  // namespace convgrid
