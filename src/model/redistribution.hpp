// Words each rank receives when an activation moves from one distribution to another (SPEC
// section 8): layer A writes its output Out at rest in LayerLayout(A).out_slice (or, when a
// pooling layer follows A, the pooled tensor in the same grid's blocks), layer B reads the same
// tensor as its input In at rest in LayerLayout(B).in_slice, and one all-to-all over all P ranks
// moves every element from its old owner to its new one. A residual add moves the shortcut into
// the distribution of the main path's Out the same way. Pure; no MPI.
//
// Counting rules (those the communication layer applies to all_to_all_v, comm/collectives.hpp):
//   words(r)    = |new slice of r| - |new slice of r ∩ old slice of r|: the elements rank r
//                 receives from OTHER ranks. Every element counts, read by B or not (the
//                 unread-pixel filter of all-gathers does not apply: an at-rest distribution
//                 holds every element, and the redistribution must deliver all of them);
//   messages(r) = 1 when P > 1 and some rank receives a word, else 0: the all-to-all is one
//                 collective over all P ranks, and a collective over q > 1 ranks counts one
//                 message on every member whatever it receives (comm/traffic.hpp); when no rank
//                 receives anything every rank knows it from the two distributions, and the
//                 all-to-all is not run.
// The backward pass moves the gradient the other way: rank r receives |old slice of r| minus the
// same intersection. Rank numbers, not grid coordinates, identify a rank across the two
// distributions: rank r sits at from.dims().coord_of(r) in A's grid and at to.dims().coord_of(r)
// in B's. A flatten between the two is a change of view only: element (n, c, y, x) of the C x H x W
// activation is feature c*H*W + y*W + x of the flattened one, and slices are compared in that view.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "layout/layer_layout.hpp"
#include "model/grid_volume.hpp"

namespace convgrid {

// The slices of the ranks at a box of grid coordinates (Placement::slices_between), summed
// against a box. A whole slice is a box whose range along each tensor dimension depends only on
// the grid coordinates that split that dimension (samples: n; channels: k and c; rows: h;
// columns: w), so over a box of coordinates the slices are every combination of those ranges,
// and what they hold of a box b adds up to a product over the tensor dimensions:
//   sum over ranks of |slice(rank) ∩ b| = prod over d of sum over ranges R of d of |R ∩ b_d|.
// Costs the coordinates of each dimension (k x c ones for the channels), not their product.
class SliceSum {
 public:
  // Each tensor dimension's ranges (samples, channels, rows, columns), one for each coordinate
  // (k x c pair for the channels) of the box.
  explicit SliceSum(std::array<std::vector<Range>, 4> ranges);
  // Elements of `b` (or of a slice's boxes) held by the slices, once for each slice holding them.
  int64_t overlap(const Box4& b) const;
  int64_t overlap(const Slice& s) const;

 private:
  // Each dimension's ranges, sorted, with touching neighbours joined (which keeps the sums) and
  // empty ones dropped.
  std::array<std::vector<Range>, 4> ranges_;
};

// Where an activation lies at rest: one Slice per rank of a grid.
class Placement {
 public:
  // Out (or dOut) of a layer's grid.
  static Placement output_of(const LayerLayout& layout);
  // Out of a layer's grid after pooling to H x W: the same grid's output blocks over the pooled
  // extents (balanced rows over Ph and columns over Pw; some blocks are empty when Ph > H), split
  // over the c-fibre like Out. Throws InputError unless H and W are in [1, Ho] and [1, Wo].
  static Placement pooled_output_of(const LayerLayout& layout, int64_t H, int64_t W);
  // In (or dIn) of a layer's grid.
  static Placement input_of(const LayerLayout& layout);
  // A concat's output (nn/network.hpp) on the grid that wrote its first operand: samples, rows and
  // columns balanced over Pn, Ph and Pw as in that grid's Out, and the joined channels balanced
  // over the Pk * Pc ranks of each k x c plane (rank (pk, pc) holds block pk * Pc + pc; some are
  // empty when there are fewer channels). Every slice is a whole box, so a window of channels
  // (an operand's part) is one box too. `tensor` is N x C x H x W from the origin.
  static Placement joined(const GridDims& dims, const Box4& tensor);

  // This placement's blocks over a pooled tensor of H x W (rows and columns balanced over Ph and
  // Pw, the samples and channels as they are): what pooling keeps. Out of a grid pooled is
  // pooled_output_of; a joined placement stays joined. Error for In, or a window.
  Placement pooled(int64_t H, int64_t W) const;
  // Channels [offset, offset + count) of a joined placement, as a tensor of its own (its channel
  // 0 is channel `offset`): where one operand of a concat goes. Error for another placement or a
  // window outside the channels.
  Placement window(int64_t offset, int64_t count) const;

  const GridDims& dims() const { return dims_; }
  // The whole tensor: N x C x H x W.
  const Box4& tensor() const { return tensor_; }
  Slice slice(int64_t rank) const { return slice_at(dims_.coord_of(rank)); }
  Slice slice_at(GridCoord g) const;
  // The slices of the ranks at coordinates first..last in every grid dimension, as one sum;
  // nullopt when one of them is not whole (a flat part of a block with fewer channels than
  // parts, whose elements are no box). Cost: the coordinates of each dimension.
  std::optional<SliceSum> slices_between(GridCoord first, GridCoord last) const;
  // The ranges a SliceSum of them is made of, for a caller that maps them first (a pooling
  // window's input rows of each block of output rows).
  std::optional<std::array<std::vector<Range>, 4>> slice_ranges_between(GridCoord first, GridCoord last) const;

 private:
  enum class Side { out, in, joined };  // out: a grid's Out, maybe pooled
  Placement(const LayerLayout& layout, Side side, Box4 tensor);
  Placement(const GridDims& dims, Side side, Box4 tensor) : dims_(dims), side_(side), tensor_(tensor) {}
  // The channels of the slices at (k, c) when they are whole, else nullopt.
  std::optional<Range> channels_at(int64_t k, int64_t c) const;
  // The block the slices at (k, c) are split from, and the part: when channels_at is nullopt.
  std::pair<int64_t, int64_t> block_and_part(int64_t k, int64_t c) const;

  GridDims dims_;
  Side side_;
  Box4 tensor_;
  // The block's range along each tensor dimension for each coordinate of the grid dimension
  // that splits it (n: pn; channels: pk for Out, pc for In; rows: ph; columns: pw), tabulated.
  std::vector<Range> n_, channel_, row_, col_;
  // The channels of split j of channel block i, at [i * parts + j], when every channel block
  // has at least `parts` channels (whole-channel splits; else the split is computed per rank).
  int64_t parts_ = 1;
  std::vector<Range> split_;
  // A window's first channel in the joined tensor (-1: not a window).
  int64_t window_offset_ = -1;
};

// Whether two tensors have the same extents, and whether `flat` is the flattened view of
// `tensor` (N x C*H*W x 1 x 1).
bool same_extents(const Box4& a, const Box4& b);
bool is_flattened_view(const Box4& flat, const Box4& tensor);
// The same elements in the flattened view of a C x H x W tensor (n, c*H*W + y*W + x, 0, 0):
// one box per whole block of channels, per channel when rows are partial, per row otherwise.
std::vector<Box4> flattened(const std::vector<Box4>& boxes, const Box4& tensor);

// Throws InputError unless `to` holds the same activation as `from` (the same N and either the
// same C x H x W or a flattened view of it: C*H*W features on 1 x 1) on the same number of ranks.
void validate_redistribution(const Placement& from, const Placement& to);
void validate_redistribution(const LayerLayout& from, const LayerLayout& to);

// Elements of `s` that also lie in `t`, where each is a Slice of the same activation in its own
// view (see above: `t` may be the flattened view of `s`'s tensor, or the other way round).
int64_t slice_overlap(const Slice& s, const Box4& s_tensor, const Slice& t, const Box4& t_tensor);

// Words rank `rank` receives in the forward redistribution from A's Out to B's In (validates as
// above; InputError for a rank outside [0, P)). Cost: O(1) boxes per slice.
int64_t redistribution_words(const LayerLayout& from, const LayerLayout& to, int64_t rank);

struct RedistributionStats {
  int64_t max_words = 0;
  double mean_words = 0;
  // For the time model (model/node_links.hpp): the largest words over ranks from peers off the
  // rank's node and on it, and the one round, at the network's latency when any rank receives
  // across it. One message per rank (redistribution_messages).
  CommLoad max_load;
};

// Messages every rank counts for one direction of a redistribution on P ranks: 1 when P > 1 and
// some rank receives words (stats.max_words > 0), else 0.
int64_t redistribution_messages(int64_t ranks, const RedistributionStats& stats);

struct RedistributionFigures {
  RedistributionStats forward;   // the activation, from -> to
  RedistributionStats backward;  // its gradient, to -> from
};

// Largest and mean words over all ranks, exact, both directions. Every rank is visited with a
// constant number of box intersections each (a flat slice is at most 7 boxes), except when both
// placements give every rank the same slice (then nothing moves). With `ranks_per_node` > 0 the
// words each rank receives from its node's other ranks are split off in max_load (that many more
// intersections a rank).
RedistributionFigures redistribution_figures(const Placement& from, const Placement& to, int64_t ranks_per_node = 0);
RedistributionStats redistribution_stats(const LayerLayout& from, const LayerLayout& to);

}  // namespace convgrid
