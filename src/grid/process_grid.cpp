// The processor grid: validation, coordinates, and the fibre communicators (MPI_Comm_create_group
// over each fibre's members, listed from the grid in the order of their index in it).
#include "grid/process_grid.hpp"

#include <vector>

#include <fmt/format.h>

#include "convgrid/checked.hpp"
#include "convgrid/error.hpp"
#include "model/node_links.hpp"

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

// A fibre's communicator, made among its members only (Communicator::subgroup): every rank knows
// them from the grid, in the order of their index in the fibre (the table of process_grid.hpp).
// The k-, c- and nhw-fibres are the cost model's own lists (fibre_ranks, model/node_links.hpp);
// ranks fit in int because the grid's size is a communicator's size.
Communicator fibre(const Communicator& world, const std::vector<int64_t>& ranks, int tag) {
  return world.subgroup(std::vector<int>(ranks.begin(), ranks.end()), tag);
}

// The spatial fibre through g: ph*Pw + pw order.
std::vector<int64_t> spatial_ranks(const GridDims& d, GridCoord g) {
  std::vector<int64_t> ranks;
  for (g.h = 0; g.h < d.Ph; ++g.h) {
    for (g.w = 0; g.w < d.Pw; ++g.w) ranks.push_back(d.rank_of(g));
  }
  return ranks;
}

}  // namespace

ProcessGrid::ProcessGrid(const GridDims& dims, const Communicator& parent)
    : dims_(validated(dims, parent)),
      world_(parent.dup()),
      coord_(dims_.coord_of(world_.rank())),
      k_fibre_(fibre(world_, fibre_ranks(dims_, coord_, Fibre::k), 1)),
      c_fibre_(fibre(world_, fibre_ranks(dims_, coord_, Fibre::c), 2)),
      nhw_fibre_(fibre(world_, fibre_ranks(dims_, coord_, Fibre::nhw), 3)),
      spatial_(fibre(world_, spatial_ranks(dims_, coord_), 4)) {}

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
