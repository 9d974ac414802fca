// The processor grid (SPEC section 2): a validated GridDims over a communicator, this rank's
// coordinate, and the fibre communicators, built once in the constructor and reused.
//
// Rank order: the rank in world() is the grid rank, row-major over (pn, pk, pc, ph, pw) with pw
// fastest (GridDims::rank_of / coord_of). Within each fibre the rank equals the natural index:
//
//   fibre        its members share        size        this rank's index in it
//   k_fibre()    pn, pc, ph, pw           Pk          pk
//   c_fibre()    pn, pk, ph, pw           Pc          pc
//   nhw_fibre()  pk, pc                   Pn*Ph*Pw    (pn*Ph + ph)*Pw + pw  (GridDims::nhw_index)
//   spatial()    pn, pk, pc               Ph*Pw       ph*Pw + pw
//
// k_fibre_part(m) cuts the k-fibre into runs of m consecutive pk (the input fibre of a grouped
// layer, layout/layer_layout.hpp); this rank's index in it is pk % m.
//
// spatial() is the h/w neighbourhood of halo exchanges: a halo wider than a neighbour's block
// comes from several ranks, so it spans every (ph, pw) of the same (pn, pk, pc).
// Example, grid 2,1,1,2,2 (8 ranks): rank 5 = (1,0,0,0,1); its nhw_fibre is all 8 ranks with it
// at index 5, its spatial() is ranks 4..7 with it at index 1, its k_ and c_fibre are itself alone.
#pragma once

#include <cstdint>
#include <map>

#include "comm/communicator.hpp"
#include "convgrid/grid_dims.hpp"

namespace convgrid {

class ProcessGrid {
 public:
  // Collective over `parent`. Throws InputError when an extent is below 1 or the grid's size
  // differs from parent.size() ("grid 2,1,1,2,1 has 4 ranks but the job has 3").
  ProcessGrid(const GridDims& dims, const Communicator& parent);

  const GridDims& dims() const { return dims_; }
  const GridCoord& coord() const { return coord_; }
  int rank() const { return world_.rank(); }

  const Communicator& world() const { return world_; }  // a duplicate of the parent
  const Communicator& k_fibre() const { return k_fibre_; }
  const Communicator& c_fibre() const { return c_fibre_; }
  const Communicator& nhw_fibre() const { return nhw_fibre_; }
  const Communicator& spatial() const { return spatial_; }
  // The run of `members` consecutive ranks of the k-fibre that holds this rank (members divides
  // Pk; the k-fibre itself when members = Pk). Made on the first call for a count (collective
  // over the k-fibre: its ranks ask for the same counts in the same order, as they build the same
  // layers) and kept.
  const Communicator& k_fibre_part(int64_t members) const;

 private:
  GridDims dims_;
  Communicator world_;
  GridCoord coord_;
  Communicator k_fibre_;
  Communicator c_fibre_;
  Communicator nhw_fibre_;
  Communicator spatial_;
  mutable std::map<int64_t, Communicator> k_fibre_parts_;
};

}  // namespace convgrid
