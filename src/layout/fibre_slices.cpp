// Member-by-member slices of a rank's fibres.
#include "layout/fibre_slices.hpp"

namespace convgrid {

FibreSlices::FibreSlices(const LayerLayout& L, GridCoord g) {
  const GridDims& d = L.dims();
  const Range fibre = L.in_fibre_of(g.k);
  for (int64_t j = fibre.begin; j < fibre.end; ++j) {
    in.push_back(L.in_slice({g.n, j, g.c, g.h, g.w}));
    in_read.push_back(L.read_count(in.back()));
  }
  for (int64_t j = 0; j < d.Pc; ++j) {
    out.push_back(L.out_slice({g.n, g.k, j, g.h, g.w}));
    out_size.push_back(out.back().size());
  }
  const Box4 block = L.ker_block(g);
  for (int64_t j = 0; j < d.nhw_size(); ++j) {
    ker.push_back({block, balanced_block(block.volume(), d.nhw_size(), j)});
    ker_size.push_back(ker.back().size());
  }
}

}  // namespace convgrid
