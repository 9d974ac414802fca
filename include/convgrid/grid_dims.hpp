// The extents of the 5-D processor grid Pn x Pk x Pc x Ph x Pw (SPEC section 2) and the rank
// order: ranks are numbered row-major over (pn, pk, pc, ph, pw), pw fastest, i.e.
//   rank = (((pn*Pk + pk)*Pc + pc)*Ph + ph)*Pw + pw.
// Pure; no MPI (the communicators live in grid/process_grid.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "convgrid/conv_shape.hpp"

namespace convgrid {

struct GridCoord {
  int64_t n = 0, k = 0, c = 0, h = 0, w = 0;
  bool operator==(const GridCoord&) const = default;
};

struct GridDims {
  int64_t Pn = 1, Pk = 1, Pc = 1, Ph = 1, Pw = 1;

  // "Pn,Pk,Pc,Ph,Pw", e.g. "2,1,1,2,1"; throws InputError naming the bad value.
  static GridDims parse(std::string_view text);
  std::string to_string() const;  // "2,1,1,2,1"
  std::array<int64_t, 5> extents() const { return {Pn, Pk, Pc, Ph, Pw}; }

  int64_t size() const { return Pn * Pk * Pc * Ph * Pw; }
  // Throws InputError when an extent is larger than the dimension it splits
  // (Pn > N, Pk > K, Pc > C, Ph > Ho, Pw > Wo): such a grid would leave ranks with empty blocks.
  // With G = s.groups > 1 the k-fibre splits the groups first (layout/layer_layout.hpp): either
  // Pk < G, each pk holding whole groups, and then Pc = 1; or Pk = m*G (m <= K/G as Pk <= K), each
  // group's output channels split over m ranks, and Pc <= C/G, splitting the group's input channels.
  void validate_for(const ConvShape& s) const;
  // True when validate_for would not throw.
  bool fits(const ConvShape& s) const {
    // (Pk <= K makes a multiple m*G of the groups split each group's K/G channels m ways.)
    const bool groups = Pk < s.groups ? Pc == 1 : Pk % s.groups == 0 && Pc <= s.Cg();
    return Pn >= 1 && Pk >= 1 && Pc >= 1 && Ph >= 1 && Pw >= 1 && Pn <= s.N && Pk <= s.K && Pc <= s.C && groups &&
           Ph <= s.Ho() && Pw <= s.Wo();
  }
  // Throws InputError when size() differs from the number of ranks.
  void validate_size(int64_t ranks) const;

  int64_t rank_of(GridCoord c) const { return (((c.n * Pk + c.k) * Pc + c.c) * Ph + c.h) * Pw + c.w; }
  GridCoord coord_of(int64_t rank) const;

  // Index of a rank within its nhw-fibre (the ranks that differ only in pn, ph, pw):
  // (pn*Ph + ph)*Pw + pw. The fibre has Pn*Ph*Pw ranks.
  int64_t nhw_index(GridCoord c) const { return (c.n * Ph + c.h) * Pw + c.w; }
  int64_t nhw_size() const { return Pn * Ph * Pw; }

  bool operator==(const GridDims&) const = default;
};

// Every ordered 5-factor factorisation of P, in lexicographic order of (Pn,Pk,Pc,Ph,Pw).
std::vector<GridDims> all_grids(int64_t P);

}  // namespace convgrid
