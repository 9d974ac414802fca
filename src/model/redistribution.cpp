// Exact words of the all-to-all between two distributions of one activation (see
// redistribution.hpp). A slice is a flat range of a box, which is at most 7 sub-boxes; two
// slices' common elements are the sum of their sub-boxes' intersections.
#include "model/redistribution.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "convgrid/error.hpp"

namespace convgrid {
namespace {

// Up to 7 boxes for a slice; more only in the flattened view.
using Boxes = std::vector<Box4>;

bool whole(const Slice& s) { return s.flat.begin == 0 && s.flat.end == s.box.volume(); }

// The coordinate of the next rank in row-major order (w fastest).
void advance(GridCoord& g, const GridDims& d) {
  if (++g.w < d.Pw) return;
  g.w = 0;
  if (++g.h < d.Ph) return;
  g.h = 0;
  if (++g.c < d.Pc) return;
  g.c = 0;
  if (++g.k < d.Pk) return;
  g.k = 0;
  ++g.n;
}

int64_t common(const Boxes& a, const Boxes& b) {
  int64_t n = 0;
  for (const Box4& x : a) {
    for (const Box4& y : b) n += x.intersect(y).volume();
  }
  return n;
}

}  // namespace

bool same_extents(const Box4& a, const Box4& b) {
  for (int d = 0; d < 4; ++d) {
    if (a.extent(d) != b.extent(d)) return false;
  }
  return true;
}

bool is_flattened_view(const Box4& flat, const Box4& tensor) {
  return flat.extent(0) == tensor.extent(0) && flat.extent(2) == 1 && flat.extent(3) == 1 &&
         flat.extent(1) == tensor.extent(1) * tensor.extent(2) * tensor.extent(3);
}

// The same elements in the flattened view of a C x H x W tensor (n, c*H*W + y*W + x, 0, 0):
// one box per whole block of channels, per channel when rows are partial, per row otherwise.
std::vector<Box4> flattened(const std::vector<Box4>& boxes, const Box4& tensor) {
  const int64_t H = tensor.extent(2), W = tensor.extent(3);
  std::vector<Box4> out;
  const auto add = [&](Range n, int64_t first, int64_t count) {
    out.push_back({{n, Range{first, first + count}, Range{0, 1}, Range{0, 1}}});
  };
  for (const Box4& b : boxes) {
    const Range n = b.r[0], c = b.r[1], y = b.r[2], x = b.r[3];
    if (b.empty()) continue;
    if (y.size() == H && x.size() == W) {
      add(n, c.begin * H * W, c.size() * H * W);
    } else if (x.size() == W) {
      for (int64_t ch = c.begin; ch < c.end; ++ch) add(n, (ch * H + y.begin) * W, y.size() * W);
    } else {
      for (int64_t ch = c.begin; ch < c.end; ++ch) {
        for (int64_t row = y.begin; row < y.end; ++row) add(n, (ch * H + row) * W + x.begin, x.size());
      }
    }
  }
  return out;
}

Placement::Placement(const LayerLayout& layout, Side side, Box4 tensor)
    : dims_(layout.dims()), side_(side), tensor_(tensor) {
  const GridDims& d = dims_;
  for (int64_t i = 0; i < d.Pn; ++i) n_.push_back(layout.n_block(i));
  // In: the channel blocks of every input fibre (pk / m) and pc, each split over the fibre's m
  // ranks; Out: the k blocks, each split over the c-fibre.
  const int64_t m = layout.in_fibre_size();
  if (side == Side::in) {
    for (int64_t f = 0; f < d.Pk / m; ++f) {
      for (int64_t i = 0; i < d.Pc; ++i) channel_.push_back(layout.c_block(f * m, i));
    }
  } else {
    for (int64_t i = 0; i < d.Pk; ++i) channel_.push_back(layout.k_block(i));
  }
  parts_ = side == Side::in ? m : d.Pc;
  const bool whole_channels = std::all_of(channel_.begin(), channel_.end(),
                                          [&](Range c) { return c.size() >= parts_; });
  if (whole_channels && channel_.size() * parts_ <= (size_t{1} << 20)) {
    for (Range c : channel_) {
      for (int64_t j = 0; j < parts_; ++j) split_.push_back(balanced_block(c.size(), parts_, j).shifted(c.begin));
    }
  }
  for (int64_t i = 0; i < d.Ph; ++i) row_.push_back(side == Side::in ? layout.rows_owned(i) : layout.h_block(i));
  for (int64_t i = 0; i < d.Pw; ++i) col_.push_back(side == Side::in ? layout.cols_owned(i) : layout.w_block(i));
}

Placement Placement::output_of(const LayerLayout& layout) {
  return Placement(layout, Side::out, output_box(layout.shape()));
}

Placement Placement::pooled_output_of(const LayerLayout& layout, int64_t H, int64_t W) {
  const ConvShape& s = layout.shape();
  if (H < 1 || H > s.Ho() || W < 1 || W > s.Wo()) {
    throw InputError(fmt::format("pooled extents {}x{} are outside the layer's output {}x{}", H, W,
                                 s.Ho(), s.Wo()));
  }
  return output_of(layout).pooled(H, W);
}

Placement Placement::input_of(const LayerLayout& layout) {
  return Placement(layout, Side::in, input_box(layout.shape()));
}

Placement Placement::joined(const GridDims& dims, const Box4& tensor) {
  Placement p(dims, Side::joined, tensor);
  for (int64_t i = 0; i < dims.Pn; ++i) p.n_.push_back(balanced_block(tensor.extent(0), dims.Pn, i));
  const int64_t planes = dims.Pk * dims.Pc;
  for (int64_t i = 0; i < planes; ++i) p.channel_.push_back(balanced_block(tensor.extent(1), planes, i));
  for (int64_t i = 0; i < dims.Ph; ++i) p.row_.push_back(balanced_block(tensor.extent(2), dims.Ph, i));
  for (int64_t i = 0; i < dims.Pw; ++i) p.col_.push_back(balanced_block(tensor.extent(3), dims.Pw, i));
  return p;
}

Placement Placement::pooled(int64_t H, int64_t W) const {
  if (side_ == Side::in || window_offset_ >= 0) throw Error("Placement::pooled: only an output or a joined placement pools");
  if (H < 1 || H > tensor_.extent(2) || W < 1 || W > tensor_.extent(3)) {
    throw InputError(fmt::format("pooled extents {}x{} are outside the activation's {}x{}", H, W,
                                 tensor_.extent(2), tensor_.extent(3)));
  }
  if (H == tensor_.extent(2) && W == tensor_.extent(3)) return *this;
  Placement p = *this;
  p.tensor_.r[2] = Range{0, H};
  p.tensor_.r[3] = Range{0, W};
  for (int64_t i = 0; i < dims_.Ph; ++i) p.row_[i] = balanced_block(H, dims_.Ph, i);
  for (int64_t i = 0; i < dims_.Pw; ++i) p.col_[i] = balanced_block(W, dims_.Pw, i);
  return p;
}

Placement Placement::window(int64_t offset, int64_t count) const {
  if (side_ != Side::joined || window_offset_ >= 0) throw Error("Placement::window: only a joined placement has windows");
  if (offset < 0 || count < 1 || offset + count > tensor_.extent(1)) {
    throw Error(fmt::format("Placement::window: channels [{}, {}) are outside [0, {})", offset,
                            offset + count, tensor_.extent(1)));
  }
  Placement p = *this;
  p.window_offset_ = offset;
  p.tensor_.r[1] = Range{0, count};
  return p;
}

std::pair<int64_t, int64_t> Placement::block_and_part(int64_t k, int64_t c) const {
  if (side_ == Side::in) return {k / parts_ * dims_.Pc + c, k % parts_};
  return {k, c};
}

std::optional<Range> Placement::channels_at(int64_t k, int64_t c) const {
  if (side_ == Side::joined) {
    const Range block = channel_[k * dims_.Pc + c];
    if (window_offset_ < 0) return block;
    const Range mine = block.intersect(Range{window_offset_, window_offset_ + tensor_.extent(1)});
    return mine.empty() ? Range{0, 0} : mine.shifted(-window_offset_);
  }
  const auto [channel, part] = block_and_part(k, c);
  if (!split_.empty()) return split_[channel * parts_ + part];
  const Range block = channel_[channel];
  if (block.size() < parts_) return std::nullopt;
  return balanced_block(block.size(), parts_, part).shifted(block.begin);
}

// LayerLayout::out_slice (Out and pooled Out: split over the c-fibre) and in_slice (split over
// the input fibre), from the tables; a joined placement's whole boxes, cut to the window.
Slice Placement::slice_at(GridCoord g) const {
  if (const std::optional<Range> channels = channels_at(g.k, g.c)) {
    return Slice::whole(Box4{{n_[g.n], *channels, row_[g.h], col_[g.w]}});
  }
  const auto [channel, part] = block_and_part(g.k, g.c);
  return split_block(Box4{{n_[g.n], channel_[channel], row_[g.h], col_[g.w]}}, parts_, part);
}

std::optional<std::array<std::vector<Range>, 4>> Placement::slice_ranges_between(GridCoord first, GridCoord last) const {
  std::array<std::vector<Range>, 4> ranges;
  for (int64_t k = first.k; k <= last.k; ++k) {
    for (int64_t c = first.c; c <= last.c; ++c) {
      const std::optional<Range> channels = channels_at(k, c);
      if (!channels) return std::nullopt;
      ranges[1].push_back(*channels);
    }
  }
  for (int64_t n = first.n; n <= last.n; ++n) ranges[0].push_back(n_[n]);
  for (int64_t h = first.h; h <= last.h; ++h) ranges[2].push_back(row_[h]);
  for (int64_t w = first.w; w <= last.w; ++w) ranges[3].push_back(col_[w]);
  return ranges;
}

std::optional<SliceSum> Placement::slices_between(GridCoord first, GridCoord last) const {
  std::optional<std::array<std::vector<Range>, 4>> ranges = slice_ranges_between(first, last);
  if (!ranges) return std::nullopt;
  return SliceSum(std::move(*ranges));
}

SliceSum::SliceSum(std::array<std::vector<Range>, 4> ranges) : ranges_(std::move(ranges)) {
  for (std::vector<Range>& list : ranges_) {
    std::erase_if(list, [](Range r) { return r.empty(); });
    std::sort(list.begin(), list.end(), [](Range a, Range b) { return a.begin < b.begin || (a.begin == b.begin && a.end < b.end); });
    size_t kept = 0;
    for (Range r : list) {
      if (kept > 0 && list[kept - 1].end == r.begin) {
        list[kept - 1].end = r.end;
      } else {
        list[kept++] = r;
      }
    }
    list.resize(kept);
  }
}

int64_t SliceSum::overlap(const Box4& b) const {
  int64_t product = 1;
  for (int d = 0; d < 4 && product > 0; ++d) {
    int64_t sum = 0;
    for (Range r : ranges_[d]) sum += r.intersect(b.r[d]).size();
    product *= sum;
  }
  return product;
}

int64_t SliceSum::overlap(const Slice& s) const {
  if (s.flat.begin == 0 && s.flat.end == s.box.volume()) return overlap(s.box);
  int64_t n = 0;
  for_each_box(s, [&](const Box4& b) { n += overlap(b); });
  return n;
}

int64_t slice_overlap(const Slice& s, const Box4& s_tensor, const Slice& t, const Box4& t_tensor) {
  if (s.empty() || t.empty()) return 0;
  const bool same = same_extents(s_tensor, t_tensor);
  if (same && whole(s) && whole(t)) return s.box.intersect(t.box).volume();
  const Boxes a = slice_boxes(s), b = slice_boxes(t);
  if (same) return common(a, b);
  if (is_flattened_view(t_tensor, s_tensor)) return common(flattened(a, s_tensor), b);
  if (is_flattened_view(s_tensor, t_tensor)) return common(a, flattened(b, t_tensor));
  throw Error("slice_overlap: the two tensors are not views of one activation");
}

void validate_redistribution(const Placement& from, const Placement& to) {
  const Box4& a = from.tensor();
  const Box4& b = to.tensor();
  const auto dims = [](const Box4& t) {
    return fmt::format("N={},C={},H={},W={}", t.extent(0), t.extent(1), t.extent(2), t.extent(3));
  };
  if (!same_extents(a, b) && !is_flattened_view(b, a) && !is_flattened_view(a, b)) {
    throw InputError(fmt::format("redistribution: the next layer's input {} does not match the "
                                 "previous layer's output {}", dims(b), dims(a)));
  }
  if (to.dims().size() != from.dims().size()) {
    throw InputError(fmt::format("redistribution: grid {} has {} ranks, grid {} has {}",
                                 from.dims().to_string(), from.dims().size(), to.dims().to_string(),
                                 to.dims().size()));
  }
}

void validate_redistribution(const LayerLayout& from, const LayerLayout& to) {
  validate_redistribution(Placement::output_of(from), Placement::input_of(to));
}

int64_t redistribution_words(const LayerLayout& from, const LayerLayout& to, int64_t rank) {
  const Placement a = Placement::output_of(from), b = Placement::input_of(to);
  validate_redistribution(a, b);
  if (rank < 0 || rank >= from.dims().size()) {
    throw InputError(
        fmt::format("redistribution: rank={} is outside [0, {})", rank, from.dims().size()));
  }
  const Slice held = a.slice(rank), wanted = b.slice(rank);
  return wanted.size() - slice_overlap(held, a.tensor(), wanted, b.tensor());
}

int64_t redistribution_messages(int64_t ranks, const RedistributionStats& stats) {
  return ranks > 1 && stats.max_words > 0 ? 1 : 0;
}

namespace {

// The coordinates of ranks [first, first + count) when they form a box of the grid (every
// coordinate between their first and last in each dimension): `at` is the first's.
std::optional<std::pair<GridCoord, GridCoord>> rank_box(const GridDims& dims, GridCoord at, int64_t first, int64_t count) {
  const GridCoord last = dims.coord_of(first + count - 1);
  int64_t volume = 1;
  for (auto [a, b] : {std::pair{at.n, last.n}, {at.k, last.k}, {at.c, last.c}, {at.h, last.h}, {at.w, last.w}}) {
    if (b < a) return std::nullopt;
    volume *= b - a + 1;
  }
  if (volume != count) return std::nullopt;
  return std::pair{at, last};
}

// The slices of a node's ranks in one placement: as a SliceSum when the ranks form a box of its
// grid, their slices are whole and they are compared in their own view (the common case; a
// product per rank), else one by one.
class NodeSlices {
 public:
  void take(const Placement& p, bool one_view, GridCoord at, int64_t first, int64_t count) {
    slices_.clear();
    sum_.reset();
    const auto box = one_view ? rank_box(p.dims(), at, first, count) : std::nullopt;
    if (box) sum_ = p.slices_between(box->first, box->second);
    if (sum_) return;
    for (int64_t s = first; s < first + count; ++s) slices_.push_back(p.slice(s));
  }

  // Elements of `mine` (in `mine_in`'s view) that the node's slices of `theirs_in` hold, rank
  // `own` (a member, whose slice shares `own_share` of them) left out.
  int64_t others_share(const Slice& mine, const Placement& mine_in, const Placement& theirs_in, int64_t own,
                       int64_t own_share) const {
    if (sum_) return sum_->overlap(mine) - own_share;
    // A slice lies in its block's box: in one view, disjoint boxes share nothing.
    const bool one_view = same_extents(theirs_in.tensor(), mine_in.tensor());
    int64_t words = 0;
    for (int64_t i = 0; i < static_cast<int64_t>(slices_.size()); ++i) {
      if (i == own || (one_view && slices_[i].box.intersect(mine.box).empty())) continue;
      words += slice_overlap(slices_[i], theirs_in.tensor(), mine, mine_in.tensor());
    }
    return words;
  }

 private:
  std::optional<SliceSum> sum_;
  std::vector<Slice> slices_;
};

}  // namespace

RedistributionFigures redistribution_figures(const Placement& from, const Placement& to, int64_t ranks_per_node) {
  validate_redistribution(from, to);
  const int64_t ranks = from.dims().size();
  RedistributionFigures f;
  int64_t total_forward = 0, total_backward = 0;
  bool forward_network = false, backward_network = false;
  // Words rank r receives from the other ranks of its node: of its new slice held by their old
  // ones (forward), of its old slice in their new ones (backward). The node's slices are taken
  // once per node.
  const int64_t node = ranks_per_node > 1 ? ranks_per_node : 0;
  NodeSlices node_old, node_new;
  const bool one_view = same_extents(from.tensor(), to.tensor());
  // Rank r's coordinates in both grids, advanced like odometers (w fastest) instead of divided.
  GridCoord a{}, b{};
  for (int64_t r = 0; r < ranks; ++r, advance(a, from.dims()), advance(b, to.dims())) {
    const Slice old_slice = from.slice_at(a), new_slice = to.slice_at(b);
    const int64_t both = slice_overlap(old_slice, from.tensor(), new_slice, to.tensor());
    const int64_t forward = new_slice.size() - both, backward = old_slice.size() - both;
    f.forward.max_words = std::max(f.forward.max_words, forward);
    f.backward.max_words = std::max(f.backward.max_words, backward);
    total_forward += forward;
    total_backward += backward;
    if (node > 0 && r % node == 0) {
      const int64_t count = std::min(ranks, r + node) - r;
      node_old.take(from, one_view, a, r, count);
      node_new.take(to, one_view, b, r, count);
    }
    const int64_t forward_node = node > 0 && forward > 0 ? node_old.others_share(new_slice, to, from, r % node, both) : 0;
    const int64_t backward_node = node > 0 && backward > 0 ? node_new.others_share(old_slice, from, to, r % node, both) : 0;
    f.forward.max_load = f.forward.max_load.max_with({0, 0, 0, forward - forward_node, forward_node});
    f.backward.max_load = f.backward.max_load.max_with({0, 0, 0, backward - backward_node, backward_node});
    forward_network |= forward > forward_node;
    backward_network |= backward > backward_node;
  }
  f.forward.mean_words = static_cast<double>(total_forward) / static_cast<double>(ranks);
  f.backward.mean_words = static_cast<double>(total_backward) / static_cast<double>(ranks);
  // One message a rank, and one round: the network's when anything crosses it.
  for (auto [stats, network] : {std::pair{&f.forward, forward_network}, std::pair{&f.backward, backward_network}}) {
    stats->max_load.messages = redistribution_messages(ranks, *stats);
    (network ? stats->max_load.network_steps : stats->max_load.node_steps) =
        static_cast<double>(stats->max_load.messages);
  }
  return f;
}

RedistributionStats redistribution_stats(const LayerLayout& from, const LayerLayout& to) {
  return redistribution_figures(Placement::output_of(from), Placement::input_of(to)).forward;
}

}  // namespace convgrid
