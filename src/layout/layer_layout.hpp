// Where every tensor of one convolution layer lives on a processor grid (SPEC sections 2-3),
// and what each rank needs for its local work. Pure index arithmetic; no MPI.
//
// Rank (pn,pk,pc,ph,pw) computes outputs n_block(pn) x k_block(pk) x h_block(ph) x w_block(pw),
// summed over c_block(pc) and all taps. At rest (between passes, each element held once):
//   In, dIn   : block (n_block, c_block, rows_owned(ph), cols_owned(pw)), split in Pk slices over
//               the k-fibre (whole channels when the block has >= Pk channels, else flat);
//   Ker, dKer : block (k_block, c_block, R, S), split in Pn*Ph*Pw flat slices over the nhw-fibre;
//   Out, dOut : block (n_block, k_block, h_block, w_block), split in Pc slices over the c-fibre.
// Input rows are split in balanced blocks, as a layer with H output rows splits its outputs:
// ph owns rows balanced_block(H, Ph, ph). So an input another layer wrote on the same Ph x Pw is
// already where this layer wants it, and a rank's halo comes from both sides: a 3x3 layer with
// pad 1 takes one row from each neighbour. Columns likewise. (SPEC section 3 assigned rows to
// the output block that first reads them, [h0*sh - pad, h1*sh - pad): a halo of R-1 rows from
// the next block, none from the previous, and a redistribution between two layers of one grid.)
//
// Example, H=Ho=8 (3x3, stride 1, pad 1), Ph=2: output rows [0,4) and [4,8); ph=0 owns input
// rows [0,4) and needs [0,5); ph=1 owns [4,8) and needs [3,8). ph=0 receives row 4 from ph=1,
// and ph=1 row 3 from ph=0.
//
// Groups (G = groups > 1; ConvShape): output channels read only their group's input channels, so
// the k-fibre splits the groups first and its ranks no longer all read the same input.
//   Pk < G   : pk holds the whole groups group_block(pk), their K/G output and C/G input
//              channels each (Pc = 1); its input is its own, the local convolution grouped;
//   Pk = m*G : group pk / m is split over m consecutive pk (its K/G output channels) and Pc
//              (its C/G input channels); those m ranks share their input.
// The ranks of a k-fibre that share their input form its input fibre, of in_fibre_size() = m
// ranks (Pk when G = 1, 1 when Pk <= G): In and dIn are split over it, not over the whole
// k-fibre. Ker is K x C/G x R x S; ker_block's channel range is within the group.
// Example, depthwise C=K=G=64 on Pk=4: pk holds channels [16pk, 16pk+16) of In, Out and Ker and
// moves no input at all; only halos and the weights' nhw-fibre remain.
#pragma once

#include <cstdint>
#include <vector>

#include "convgrid/conv_shape.hpp"
#include "layout/box.hpp"
#include "convgrid/grid_dims.hpp"
#include "layout/read_pixels.hpp"

namespace convgrid {

// A piece of input exchanged with a rank of the same spatial neighbourhood (same pn,pk,pc).
struct HaloPiece {
  int64_t peer;  // the peer's index in the spatial fibre: ph*Pw + pw
  Box4 box;      // global (n, c, y, x) coordinates
  int64_t words; // read pixels in the box (the elements that travel)
};

// The whole tensors of a layer as boxes from the origin: In/dIn (N,C,H,W), Ker/dKer (K,C,R,S),
// Out/dOut (N,K,Ho,Wo).
Box4 input_box(const ConvShape& s);
Box4 weight_box(const ConvShape& s);
Box4 output_box(const ConvShape& s);

class LayerLayout {
 public:
  // Throws InputError when the grid does not fit the layer (GridDims::validate_for).
  LayerLayout(const ConvShape& shape, const GridDims& dims);

  const ConvShape& shape() const { return shape_; }
  const GridDims& dims() const { return dims_; }
  const ReadPixels& read() const { return read_; }

  // Iteration-space blocks. The input channels of pc depend on pk's groups (one block, all pk,
  // when G = 1).
  Range n_block(int64_t pn) const { return balanced_block(shape_.N, dims_.Pn, pn); }
  Range k_block(int64_t pk) const;
  Range c_block(int64_t pk, int64_t pc) const;
  Range h_block(int64_t ph) const { return balanced_block(shape_.Ho(), dims_.Ph, ph); }
  Range w_block(int64_t pw) const { return balanced_block(shape_.Wo(), dims_.Pw, pw); }

  // The groups of pk ([0, 1) when G = 1), and its input fibre: m = in_fibre_size() ranks
  // pk - pk % m ... that share their input; pk is member pk % m.
  Range group_block(int64_t pk) const;
  int64_t in_fibre_size() const { return in_fibre_; }
  // The pk of that input fibre: [pk - pk % m, pk - pk % m + m).
  Range in_fibre_of(int64_t pk) const { return Range{0, in_fibre_}.shifted(pk - pk % in_fibre_); }

  // Input rows (columns) owned at rest by ph (pw), and read by its output rows (columns).
  Range rows_owned(int64_t ph) const;
  Range cols_owned(int64_t pw) const;
  Range rows_needed(int64_t ph) const;
  Range cols_needed(int64_t pw) const;

  Box4 in_block(GridCoord g) const;   // (n, c, y, x): owned by (pn,pc,ph,pw)
  Box4 in_needed(GridCoord g) const;  // (n, c, y, x): read by the rank's outputs
  Box4 out_block(GridCoord g) const;  // (n, k, h, w)
  Box4 ker_block(GridCoord g) const;  // (k, c, r, s)
  Slice in_slice(GridCoord g) const;  // at-rest share of In/dIn held by g (split over the input fibre)
  Slice out_slice(GridCoord g) const; // at-rest share of Out/dOut held by g
  Slice ker_slice(GridCoord g) const; // at-rest share of Ker/dKer held by g

  // True when the rank's needed input is exactly its at-rest In slice (no input fibre, no halo
  // either way): the grid algorithm then uses the slice where it lies, without a copy.
  bool input_in_place(GridCoord g) const;

  // True when no input fibre and no halo either way: the needed input lies inside the at-rest slice,
  // which may go on past it by a few rows or columns no output reads (a 1x1 filter at stride 2
  // on an even image), and the slice begins at the first row and column read (or at the image's
  // edge), since rows before would be a negative padding. The grid algorithm then gives the
  // kernel the slice where it lies, shaped as block_shape(g).
  bool input_inside_block(GridCoord g) const;

  // The rank's local convolution: input in_needed(g), output out_block(g), weights ker_block(g),
  // with the padding that remains at the image border; grouped when g holds several groups.
  ConvShape local_shape(GridCoord g) const;
  // The same convolution on input in_block(g) (for input_inside_block(g)): the unread rows and
  // columns at the end (fewer than the stride) take the place of bottom and right padding.
  ConvShape block_shape(GridCoord g) const;

  // Read input pixels in a region of In (what travels when that region is sent).
  int64_t read_count(const Slice& s) const;
  int64_t read_count(const Box4& b) const;

  // Halo pieces of in_needed(g) owned by other ranks of g's spatial fibre (received in forward,
  // sent back in backward-data), and pieces of in_block(g) that others need. Only pieces with
  // at least one read pixel, in increasing peer order.
  std::vector<HaloPiece> halo_recv(GridCoord g) const;
  std::vector<HaloPiece> halo_send(GridCoord g) const;

 private:
  // The local convolution of g's outputs on input box `in` (pads from where `in` lies).
  ConvShape shape_on(GridCoord g, const Box4& in) const;

  template <class BoxOf, class RowsOf, class ColsOf>
  std::vector<HaloPiece> halo_pieces(GridCoord g, BoxOf box_of, Range rows, Range cols,
                                     RowsOf rows_of, ColsOf cols_of) const;

  ConvShape shape_;
  GridDims dims_;
  ReadPixels read_;
  int64_t in_fibre_;
};

}  // namespace convgrid
