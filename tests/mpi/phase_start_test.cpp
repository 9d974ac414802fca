// sim::start_together, the start of every timed phase (convgrid step, conv, bench): no rank starts
// before the last one has arrived, in both builds; under SMPI every rank starts at the same
// simulated instant, to a nanosecond, however far apart they arrived (the cost model's
// assumption that a phase starts on all ranks together; docs/scale.md).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "comm/communicator.hpp"
#include "sim/phase_start.hpp"

#ifdef CONVGRID_SMPI
#include <smpi/smpi_helpers_internal.h>
#endif

namespace convgrid {
namespace {

// Real time under Open MPI, simulated time under SMPI.
void wait_seconds(double seconds) {
#ifdef CONVGRID_SMPI
  smpi_usleep(static_cast<useconds_t>(seconds * 1e6));
#else
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
#endif
}

TEST(PhaseStart, NoRankStartsBeforeTheLastArrives) {
  const Communicator world = Communicator::world();
  constexpr double kLate = 0.05;
  MPI_Barrier(world.raw());
  // The last rank arrives 50 ms after the others (each rank measures on its own clock).
  if (world.rank() == world.size() - 1) wait_seconds(kLate);
  const double arrived = MPI_Wtime();
  const double start = sim::start_together(world);
  EXPECT_GE(start, arrived);
  if (world.rank() != world.size() - 1) {
    EXPECT_GE(start - arrived, kLate / 2);
  }
}

#ifdef CONVGRID_SMPI
std::vector<double> all_gathered(const Communicator& world, double x) {
  std::vector<double> all(static_cast<size_t>(world.size()));
  MPI_Allgather(&x, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, world.raw());
  return all;
}

// Only under SMPI: the Open MPI build's start is a barrier, which ranks leave at different times.
TEST(PhaseStart, SimulatedRanksStartAtOneInstant) {
  const Communicator world = Communicator::world();
  // Rank r arrives r * 7 us after rank 0 (simulated time: one clock for all ranks).
  wait_seconds(7e-6 * world.rank());
  const std::vector<double> arrived = all_gathered(world, MPI_Wtime());
  wait_seconds(3e-6 * (world.size() - world.rank()));
  const double mine = MPI_Wtime();
  const std::vector<double> starts = all_gathered(world, sim::start_together(world));
  const auto [first, last] = std::minmax_element(starts.begin(), starts.end());
  EXPECT_LE(*last - *first, 1e-9);
  EXPECT_GE(*first, mine);
  EXPECT_GE(*first, *std::max_element(arrived.begin(), arrived.end()));
}
#endif

}  // namespace
}  // namespace convgrid
