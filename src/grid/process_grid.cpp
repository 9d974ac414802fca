// The processor grid: validation, coordinates, and the fibre communicators (MPI_Comm_create_group
// over each fibre's members, listed from the grid in the order of their index in it).
#include "grid/process_grid.hpp"

#include <vector>

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

// The fibre of the ranks that share `me`'s coordinates except those marked in `v`, in the order of
// their index in it (the varying coordinates in grid order, the last fastest: the table of
// process_grid.hpp). Every rank knows its fibre from the grid alone, so the communicator is made
// among the members only (Communicator::subgroup); ranks fit in int because the grid's size is a
// communicator's size.
struct Varies {
  bool n = false, k = false, c = false, h = false, w = false;
};
Communicator fibre(const Communicator& world, const GridDims& dims, GridCoord me, Varies v, int tag) {
  std::vector<int> members;
  GridCoord g = me;
  for (g.n = v.n ? 0 : me.n; g.n < (v.n ? dims.Pn : me.n + 1); ++g.n) {
    for (g.k = v.k ? 0 : me.k; g.k < (v.k ? dims.Pk : me.k + 1); ++g.k) {
      for (g.c = v.c ? 0 : me.c; g.c < (v.c ? dims.Pc : me.c + 1); ++g.c) {
        for (g.h = v.h ? 0 : me.h; g.h < (v.h ? dims.Ph : me.h + 1); ++g.h) {
          for (g.w = v.w ? 0 : me.w; g.w < (v.w ? dims.Pw : me.w + 1); ++g.w) {
            members.push_back(static_cast<int>(dims.rank_of(g)));
          }
        }
      }
    }
  }
  return world.subgroup(members, tag);
}

}  // namespace

ProcessGrid::ProcessGrid(const GridDims& dims, const Communicator& parent)
    : dims_(validated(dims, parent)),
      world_(parent.dup()),
      coord_(dims_.coord_of(world_.rank())),
      k_fibre_(fibre(world_, dims_, coord_, {.k = true}, 1)),
      c_fibre_(fibre(world_, dims_, coord_, {.c = true}, 2)),
      nhw_fibre_(fibre(world_, dims_, coord_, {.n = true, .h = true, .w = true}, 3)),
      spatial_(fibre(world_, dims_, coord_, {.h = true, .w = true}, 4)) {}

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
