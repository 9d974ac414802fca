// The processor grid: validation, coordinates, and the fibre communicators (MPI_Comm_split, the
// colour being the grid rank of the fibre's first member and the key the index in the fibre).
#include "grid/process_grid.hpp"

#include <fmt/format.h>

#include "convgrid/checked.hpp"
#include "convgrid/error.hpp"

namespace convgrid {
namespace {

const GridDims& validated(const GridDims& dims, const Communicator& parent) {
  for (int64_t extent : dims.extents()) {
    if (extent < 1) {
      throw InputError(fmt::format("grid {}: every extent must be at least 1", dims.to_string()));
    }
  }
  checked_product({dims.Pn, dims.Pk, dims.Pc, dims.Ph, dims.Pw}, "grid size");  // before size()
  dims.validate_size(parent.size());
  return dims;
}

// The fibre of the ranks that share this rank's coordinates except those zeroed in `first`,
// ordered by `index`. Rank and index fit in int because the grid's size is a communicator's size.
Communicator fibre(const Communicator& world, const GridDims& dims, GridCoord first,
                   int64_t index) {
  return world.split(static_cast<int>(dims.rank_of(first)), static_cast<int>(index));
}

}  // namespace

ProcessGrid::ProcessGrid(const GridDims& dims, const Communicator& parent)
    : dims_(validated(dims, parent)),
      world_(parent.dup()),
      coord_(dims_.coord_of(world_.rank())),
      k_fibre_(fibre(world_, dims_, {coord_.n, 0, coord_.c, coord_.h, coord_.w}, coord_.k)),
      c_fibre_(fibre(world_, dims_, {coord_.n, coord_.k, 0, coord_.h, coord_.w}, coord_.c)),
      nhw_fibre_(fibre(world_, dims_, {0, coord_.k, coord_.c, 0, 0}, dims_.nhw_index(coord_))),
      spatial_(fibre(world_, dims_, {coord_.n, coord_.k, coord_.c, 0, 0},
                     coord_.h * dims_.Pw + coord_.w)) {}

const Communicator& ProcessGrid::k_fibre_part(int64_t members) const {
  if (members == dims_.Pk) return k_fibre_;
  if (members < 1 || dims_.Pk % members != 0) {
    throw Error(fmt::format("k_fibre_part: {} members do not divide Pk={}", members, dims_.Pk));
  }
  auto it = k_fibre_parts_.find(members);
  if (it == k_fibre_parts_.end()) {
    it = k_fibre_parts_
             .emplace(members, k_fibre_.split(static_cast<int>(coord_.k / members), static_cast<int>(coord_.k % members)))
             .first;
  }
  return it->second;
}

}  // namespace convgrid
