// Words and messages each rank receives in one pass of the streamed grid algorithm
// (algo/streamed_conv.hpp), from the block arithmetic alone, with the counting rules of
// model/grid_volume.hpp. The panels partition the blocks, so the words of each kind equal the
// grid algorithm's with nothing held (grid_pass_volume(..., Held{})); the messages are one per
// panel per gather on a fibre of more than one rank, one per non-empty halo piece per panel, and
// those of the final reductions (with filter panels in backward-weights, one reduce-scatter per
// panel, non-blocking and linear). Pure; no MPI.
#pragma once

#include <cstdint>
#include <vector>

#include "convgrid/local_conv.hpp"
#include "layout/layer_layout.hpp"
#include "model/grid_volume.hpp"

namespace convgrid {

struct StreamOptions {
  int64_t panels = 1;  // b: clamped to the reduction range of the rank's block
  int64_t pieces = 4;  // chunks of samples per panel's local work (requests tested between)
  // False skips the local work (the results are then not computed): the same communication,
  // for measuring it alone (convgrid bench --panels).
  bool local_work = true;
};

// Whether backward-weights on rank g streams filters rather than samples: when the rank reads its
// input in place (nothing of In to gather, no halo) and dKer is reduced over an nhw-fibre of more
// than one rank that splits only the samples (so that all its members decide alike). Each filter
// panel's dKer rows are then complete when the panel is, and their reduce-scatter (non-blocking)
// runs while the next panel computes, as data-parallel frameworks hide their gradient buckets;
// with sample panels dKer is complete only after the last one.
bool weights_in_filter_panels(const LayerLayout& layout, GridCoord g);

// The panels of pass p on rank g for `panels` requested (b): the reduction range of the rank's
// block (channels of c_block for forward, filters of k_block for backward-data, samples of
// n_block for backward-weights, or its filters where weights_in_filter_panels) in min(b, its
// size) balanced sub-ranges, larger ones first.
std::vector<Range> stream_panels(const LayerLayout& layout, GridCoord g, Pass p, int64_t panels);

// Filter panel `filters` (global filter indices within the Ker block `ker_block`) as a flat range
// of that block: filters lead, so a panel is one range.
Range filter_panel_flat(const Box4& ker_block, Range filters);
// The words of flat range `panel` in each of the nhw-fibre's flat dKer slices (FibreSlices::ker),
// in fibre order. The slices are consecutive flat ranges of the block, so these are the counts of
// a reduce-scatter of the panel's range.
std::vector<int64_t> filter_panel_counts(const std::vector<Slice>& ker_slices, Range panel);

// `ranks_per_node` splits the words and rounds by link (model/node_links.hpp; 0: no node level).
PassVolume streamed_pass_volume(const LayerLayout& layout, GridCoord g, Pass p, int64_t panels,
                                int64_t ranks_per_node = 0);

}  // namespace convgrid
