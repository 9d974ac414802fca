// Block, slice, halo and local-shape arithmetic of one layer on one grid.
#include "layout/layer_layout.hpp"

#include <algorithm>

namespace convgrid {
namespace {

// Input indices read by output block `out`: [o0*stride - pad, (o1-1)*stride - pad + span).
Range needed(Range out, int64_t stride, int64_t pad, int64_t span, int64_t in) {
  return Range{out.begin * stride - pad, (out.end - 1) * stride - pad + span}.intersect({0, in});
}

}  // namespace

Box4 input_box(const ConvShape& s) {
  return {{Range{0, s.N}, Range{0, s.C}, Range{0, s.H}, Range{0, s.W}}};
}
Box4 weight_box(const ConvShape& s) {
  return {{Range{0, s.K}, Range{0, s.Cg()}, Range{0, s.R}, Range{0, s.S}}};
}
Box4 output_box(const ConvShape& s) {
  return {{Range{0, s.N}, Range{0, s.K}, Range{0, s.Ho()}, Range{0, s.Wo()}}};
}

LayerLayout::LayerLayout(const ConvShape& shape, const GridDims& dims)
    : shape_(shape), dims_(dims), read_(shape) {
  dims_.validate_for(shape_);
  in_fibre_ = shape_.groups == 1 ? dims_.Pk : std::max<int64_t>(1, dims_.Pk / shape_.groups);
}

Range LayerLayout::group_block(int64_t pk) const {
  const int64_t G = shape_.groups;
  if (dims_.Pk <= G) return balanced_block(G, dims_.Pk, pk);
  const int64_t g = pk / in_fibre_;
  return {g, g + 1};
}

Range LayerLayout::k_block(int64_t pk) const {
  if (shape_.groups == 1) return balanced_block(shape_.K, dims_.Pk, pk);
  const Range groups = group_block(pk);
  if (dims_.Pk < shape_.groups) return {groups.begin * shape_.Kg(), groups.end * shape_.Kg()};
  return balanced_block(shape_.Kg(), in_fibre_, pk % in_fibre_).shifted(groups.begin * shape_.Kg());
}

Range LayerLayout::c_block(int64_t pk, int64_t pc) const {
  if (shape_.groups == 1) return balanced_block(shape_.C, dims_.Pc, pc);
  const Range groups = group_block(pk);
  if (dims_.Pk < shape_.groups) return {groups.begin * shape_.Cg(), groups.end * shape_.Cg()};  // Pc = 1
  return balanced_block(shape_.Cg(), dims_.Pc, pc).shifted(groups.begin * shape_.Cg());
}

Range LayerLayout::rows_owned(int64_t ph) const { return balanced_block(shape_.H, dims_.Ph, ph); }
Range LayerLayout::cols_owned(int64_t pw) const { return balanced_block(shape_.W, dims_.Pw, pw); }
Range LayerLayout::rows_needed(int64_t ph) const {
  return needed(h_block(ph), shape_.stride_h, shape_.pad_top, shape_.dil_h * (shape_.R - 1) + 1,
                shape_.H);
}
Range LayerLayout::cols_needed(int64_t pw) const {
  return needed(w_block(pw), shape_.stride_w, shape_.pad_left, shape_.dil_w * (shape_.S - 1) + 1,
                shape_.W);
}

Box4 LayerLayout::in_block(GridCoord g) const {
  return {{n_block(g.n), c_block(g.k, g.c), rows_owned(g.h), cols_owned(g.w)}};
}
Box4 LayerLayout::in_needed(GridCoord g) const {
  return {{n_block(g.n), c_block(g.k, g.c), rows_needed(g.h), cols_needed(g.w)}};
}
Box4 LayerLayout::out_block(GridCoord g) const {
  return {{n_block(g.n), k_block(g.k), h_block(g.h), w_block(g.w)}};
}
Box4 LayerLayout::ker_block(GridCoord g) const {
  // Ker's channels are those within the group: every group's block starts at channel 0.
  const Range c = c_block(g.k, g.c);
  const int64_t first = shape_.groups == 1 ? 0 : group_block(g.k).begin * shape_.Cg();
  const Range within = dims_.Pk < shape_.groups ? Range{0, shape_.Cg()} : c.shifted(-first);
  return {{k_block(g.k), within, Range{0, shape_.R}, Range{0, shape_.S}}};
}
Slice LayerLayout::in_slice(GridCoord g) const {
  return split_block(in_block(g), in_fibre_, g.k % in_fibre_);
}
Slice LayerLayout::out_slice(GridCoord g) const { return split_block(out_block(g), dims_.Pc, g.c); }
Slice LayerLayout::ker_slice(GridCoord g) const {
  Box4 b = ker_block(g);
  return {b, balanced_block(b.volume(), dims_.nhw_size(), dims_.nhw_index(g))};
}

bool LayerLayout::input_in_place(GridCoord g) const {
  return in_fibre_ == 1 && in_needed(g) == in_block(g) && halo_recv(g).empty() &&
         halo_send(g).empty();
}

bool LayerLayout::input_inside_block(GridCoord g) const {
  if (in_fibre_ != 1 || !halo_recv(g).empty() || !halo_send(g).empty() ||
      in_block(g).intersect(in_needed(g)) != in_needed(g)) {
    return false;
  }
  // Unread rows before the first read one would be a negative padding, which oneDNN refuses.
  const ConvShape l = block_shape(g);
  return l.pad_top >= 0 && l.pad_left >= 0;
}

ConvShape LayerLayout::local_shape(GridCoord g) const { return shape_on(g, in_needed(g)); }

ConvShape LayerLayout::block_shape(GridCoord g) const {
  ConvShape l = shape_on(g, in_block(g));
  // Unread rows past the last read one (input_inside_block: no other rank reads them): with no
  // padding there the kernel's output extent, floor((H + pads - span) / stride) + 1, is unchanged
  // as long as they are fewer than the stride, as they are when the blocks split the input as
  // the outputs (a 1x1 filter at stride 2 on an even image).
  l.pad_bottom = std::max<int64_t>(l.pad_bottom, 0);
  l.pad_right = std::max<int64_t>(l.pad_right, 0);
  return l;
}

ConvShape LayerLayout::shape_on(GridCoord g, const Box4& in) const {
  ConvShape l = shape_;
  const Box4 out = out_block(g);
  l.N = in.extent(0);
  l.C = in.extent(1);
  l.H = in.extent(2);
  l.W = in.extent(3);
  l.K = out.extent(1);
  l.groups = dims_.Pk < shape_.groups ? group_block(g.k).size() : 1;
  // Output row h reads local row h*sh + r*dh - (pad_top - h0*sh + first needed row).
  l.pad_top = shape_.pad_top - out.r[2].begin * shape_.stride_h + in.r[2].begin;
  l.pad_left = shape_.pad_left - out.r[3].begin * shape_.stride_w + in.r[3].begin;
  const int64_t span_h = (out.extent(2) - 1) * shape_.stride_h + shape_.dil_h * (shape_.R - 1) + 1;
  const int64_t span_w = (out.extent(3) - 1) * shape_.stride_w + shape_.dil_w * (shape_.S - 1) + 1;
  l.pad_bottom = span_h - l.H - l.pad_top;
  l.pad_right = span_w - l.W - l.pad_left;
  return l;
}

int64_t LayerLayout::read_count(const Slice& s) const {
  if (read_.all_read()) return s.size();
  int64_t n = 0;
  for_each_box(s, [&](const Box4& b) { n += read_count(b); });
  return n;
}

int64_t LayerLayout::read_count(const Box4& b) const {
  return b.extent(0) * b.extent(1) * read_.rows_in(b.r[2]) * read_.cols_in(b.r[3]);
}

// The blocks j in [0, parts) whose range_of(j) may meet `target`, given that the begins and the
// ends of range_of(j) never decrease with j (true of owned and of needed rows and columns):
// [first j with end > target.begin, first j with begin >= target.end).
namespace {
template <class RangeOf>
Range meeting_blocks(int64_t parts, RangeOf range_of, Range target) {
  auto first = [&](auto pred) {
    int64_t lo = 0, hi = parts;
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (pred(range_of(mid))) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
  return {first([&](Range r) { return r.end > target.begin; }),
          first([&](Range r) { return r.begin >= target.end; })};
}
}  // namespace

// Pieces between g and the other ranks of its spatial fibre: box_of(peer) is the region moved,
// and rows_of / cols_of give the peer's rows and columns that can take part (to skip the others).
template <class BoxOf, class RowsOf, class ColsOf>
std::vector<HaloPiece> LayerLayout::halo_pieces(GridCoord g, BoxOf box_of, Range rows, Range cols,
                                                RowsOf rows_of, ColsOf cols_of) const {
  std::vector<HaloPiece> pieces;
  const Range hs = meeting_blocks(dims_.Ph, rows_of, rows);
  const Range ws = meeting_blocks(dims_.Pw, cols_of, cols);
  for (int64_t ph = hs.begin; ph < hs.end; ++ph) {
    for (int64_t pw = ws.begin; pw < ws.end; ++pw) {
      if (ph == g.h && pw == g.w) continue;
      GridCoord peer = g;
      peer.h = ph;
      peer.w = pw;
      Box4 box = box_of(peer);
      int64_t words = read_count(box);
      if (words > 0) pieces.push_back({ph * dims_.Pw + pw, box, words});
    }
  }
  return pieces;
}

std::vector<HaloPiece> LayerLayout::halo_recv(GridCoord g) const {
  const Box4 need = in_needed(g);
  return halo_pieces(
      g, [&](GridCoord peer) { return need.intersect(in_block(peer)); }, need.r[2], need.r[3],
      [&](int64_t ph) { return rows_owned(ph); }, [&](int64_t pw) { return cols_owned(pw); });
}

std::vector<HaloPiece> LayerLayout::halo_send(GridCoord g) const {
  const Box4 mine = in_block(g);
  return halo_pieces(
      g, [&](GridCoord peer) { return in_needed(peer).intersect(mine); }, mine.r[2], mine.r[3],
      [&](int64_t ph) { return rows_needed(ph); }, [&](int64_t pw) { return cols_needed(pw); });
}

}  // namespace convgrid
