// MPI tests of ProcessGrid (src/grid): for every factorisation of the world size, each fibre
// communicator has the documented size, this rank's index in it is the documented one, and its
// members are exactly the ranks that share the fibre's fixed coordinates (checked by gathering
// every member's coordinate over the fibre). Also the errors for a grid that does not fit the job.
#include <mpi.h>

#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "comm/communicator.hpp"
#include "comm/mpi_error.hpp"
#include "convgrid/error.hpp"
#include "grid/process_grid.hpp"

namespace convgrid {
namespace {

// Every member's grid coordinate, in the order of their ranks in `comm`.
std::vector<GridCoord> gather_coords(const Communicator& comm, GridCoord mine) {
  const int64_t packed[5] = {mine.n, mine.k, mine.c, mine.h, mine.w};
  std::vector<int64_t> all(5 * comm.size());
  check_mpi(MPI_Allgather(packed, 5, MPI_INT64_T, all.data(), 5, MPI_INT64_T, comm.raw()),
            "MPI_Allgather");
  std::vector<GridCoord> coords;
  for (int i = 0; i < comm.size(); ++i) {
    coords.push_back({all[5 * i], all[5 * i + 1], all[5 * i + 2], all[5 * i + 3], all[5 * i + 4]});
  }
  return coords;
}

// A fibre as documented in process_grid.hpp: its size, the index of a member, and the
// coordinates its members share (the varying ones set to zero).
struct FibreSpec {
  const char* name;
  const Communicator& comm;
  int64_t size;
  std::function<int64_t(GridCoord)> index;
  std::function<GridCoord(GridCoord)> shared;
};

TEST(ProcessGrid, EveryFactorisationHasTheDocumentedFibres) {
  const Communicator world = Communicator::world();
  for (const GridDims& dims : all_grids(world.size())) {
    SCOPED_TRACE("grid " + dims.to_string());
    const ProcessGrid grid(dims, world);
    EXPECT_EQ(grid.dims(), dims);
    EXPECT_EQ(grid.rank(), world.rank());
    EXPECT_EQ(grid.coord(), dims.coord_of(world.rank()));

    const FibreSpec fibres[] = {
        {"world", grid.world(), dims.size(), [&](GridCoord c) { return dims.rank_of(c); },
         [](GridCoord) { return GridCoord{}; }},
        {"k_fibre", grid.k_fibre(), dims.Pk, [](GridCoord c) { return c.k; },
         [](GridCoord c) {
           return GridCoord{c.n, 0, c.c, c.h, c.w};
         }},
        {"c_fibre", grid.c_fibre(), dims.Pc, [](GridCoord c) { return c.c; },
         [](GridCoord c) {
           return GridCoord{c.n, c.k, 0, c.h, c.w};
         }},
        {"nhw_fibre", grid.nhw_fibre(), dims.Pn * dims.Ph * dims.Pw,
         [&](GridCoord c) { return (c.n * dims.Ph + c.h) * dims.Pw + c.w; },
         [](GridCoord c) {
           return GridCoord{0, c.k, c.c, 0, 0};
         }},
        {"spatial", grid.spatial(), dims.Ph * dims.Pw,
         [&](GridCoord c) { return c.h * dims.Pw + c.w; },
         [](GridCoord c) {
           return GridCoord{c.n, c.k, c.c, 0, 0};
         }},
    };
    for (const FibreSpec& f : fibres) {
      SCOPED_TRACE(f.name);
      ASSERT_EQ(f.comm.size(), f.size);
      EXPECT_EQ(f.comm.rank(), f.index(grid.coord()));
      // Members share the fixed coordinates and sit at their index, so the fibre holds each of
      // the `size` ranks that share them exactly once.
      const std::vector<GridCoord> members = gather_coords(f.comm, grid.coord());
      for (int i = 0; i < f.comm.size(); ++i) {
        EXPECT_EQ(f.shared(members[i]), f.shared(grid.coord())) << "member " << i;
        EXPECT_EQ(f.index(members[i]), i) << "member " << i;
      }
    }
  }
}

TEST(ProcessGrid, GridOfAnotherSizeThrowsInputError) {
  const Communicator world = Communicator::world();
  const int P = world.size();
  try {
    ProcessGrid grid(GridDims{P + 1, 1, 1, 1, 1}, world);
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              fmt::format("grid {},1,1,1,1 has {} ranks but the job has {}", P + 1, P + 1, P));
  }
  EXPECT_THROW(ProcessGrid(GridDims{-1, -1, 1, 1, P}, world), InputError);  // product is P
  EXPECT_THROW(ProcessGrid(GridDims{int64_t{1} << 40, int64_t{1} << 40, 1, 1, 1}, world),
               InputError);  // product overflows
}

}  // namespace
}  // namespace convgrid
