// Words each rank receives when an activation moves from one layer's grid to the next one's
// (SPEC section 8): layer A writes its output Out at rest in LayerLayout(A).out_slice, layer B
// reads the same tensor as its input In at rest in LayerLayout(B).in_slice, and one all-to-all
// over all P ranks moves every element from its old owner to its new one. Pure; no MPI.
//
// Counting rules (those the communication layer applies to all_to_all_v, comm/collectives.hpp):
//   words(r)    = |new slice of r| - |new slice of r ∩ old slice of r|: the elements rank r
//                 receives from OTHER ranks. Every element counts, read by B or not (the
//                 unread-pixel filter of all-gathers does not apply: an at-rest distribution
//                 holds every element, and the redistribution must deliver all of them);
//   messages(r) = 1 when P > 1, else 0: the all-to-all is one collective over all P ranks, and
//                 a collective over q > 1 ranks counts one message on every member whatever it
//                 receives (comm/traffic.hpp).
// Rank numbers, not grid coordinates, identify a rank across the two layers: rank r sits at
// from.dims().coord_of(r) in A's grid and at to.dims().coord_of(r) in B's.
#pragma once

#include <cstdint>

#include "layout/layer_layout.hpp"

namespace convgrid {

// Throws InputError unless B can read A's output as its input (to.N == from.N, to.C == from.K,
// to.H == from.Ho(), to.W == from.Wo()) on the same number of ranks.
void validate_redistribution(const LayerLayout& from, const LayerLayout& to);

// Words rank `rank` receives (validates as above; InputError for a rank outside [0, P)).
// Cost: O(rows of the rank's new slice).
int64_t redistribution_words(const LayerLayout& from, const LayerLayout& to, int64_t rank);

// Messages every rank counts for the redistribution's all-to-all: 1 when P > 1, else 0.
int64_t redistribution_messages(const LayerLayout& from);

struct RedistributionStats {
  int64_t max_words = 0;
  double mean_words = 0;
};

// Largest and mean words over all ranks, exact. Cost: O(P * rows per new slice), every rank
// visited, except when both grids are the same data-parallel grid (only Pn > 1): then rank r's
// Out slice of A and In slice of B are both the whole sample block n_block(pn), and no word moves.
RedistributionStats redistribution_stats(const LayerLayout& from, const LayerLayout& to);

}  // namespace convgrid
