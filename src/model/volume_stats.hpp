// Words and messages of one pass over ALL ranks of a grid, as the planner needs them: the largest
// and the mean over ranks, exact, without visiting every rank (a grid may have 65536).
//
// Mean: the totals over ranks have closed forms (an all-gather of a block over q ranks delivers
// (q-1) copies of it in all; a reduce-scatter receives q-1 contributions to every slice; a halo
// is the sum over neighbour pairs, which factorises into rows times columns).
// Largest: ranks fall into classes per grid dimension (coordinates whose blocks, halos and slices
// look alike: a few per dimension), and the words of a rank depend only on its classes and on the
// size of its weight slice, which is one of two values; so the largest is found by evaluating
// grid_pass_volume on two representatives of every combination of classes. With a node level a
// class also fixes the coordinate's rank offset modulo the node size and the neighbours its halos
// exchange with, so that node boundaries cut the fibres and halos of a combination's ranks alike
// and the busiest rank's network and node loads are exact too.
#pragma once

#include <cstdint>
#include <vector>

#include "model/grid_volume.hpp"

namespace convgrid {

struct VolumeStats {
  int64_t max_words = 0;
  double mean_words = 0;
  int64_t max_messages = 0;
  double mean_messages = 0;
  CommLoad max_load;  // what the time model reads (rounds by link), each figure the largest over ranks
};

// `ranks_per_node` splits max_load by link (model/node_links.hpp; 0: no node level). Ranks fill
// nodes in order, so which fibres and halos stay inside a node depends on a rank's position, not
// only on its block classes: the representatives below take that into their classes.
VolumeStats pass_volume_stats(const LayerLayout& layout, Pass pass, Held held, int64_t ranks_per_node = 0);

// Ranks that together attain the largest value over all ranks of any per-rank figure that
// depends only on block sizes, halos, slices and read pixels (words, messages, memory): two per
// combination of coordinate classes. With `ranks_per_node` > 0 also of the figures that depend on
// which of a rank's fibre members and halo neighbours share its node of that many consecutive
// ranks (the link loads): a coordinate's class then includes its rank offset modulo the node
// size, and the neighbours its halos exchange with. Every rank when the combinations are as many.
std::vector<GridCoord> representative_ranks(const LayerLayout& layout, int64_t ranks_per_node = 0);

// The mean alone (cheap: a few loops over Ph and Pw), for pruning a search.
VolumeStats pass_volume_mean(const LayerLayout& layout, Pass pass, Held held);

}  // namespace convgrid
