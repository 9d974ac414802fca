// main() for the MPI tests: initialises MPI, runs GoogleTest on every rank, and makes the job's
// exit status non-zero when any rank failed. Only rank 0 prints GoogleTest's listener output
// (every rank does with CONVGRID_TEST_ALL_RANKS=1 in the environment, to see another rank's failure).
#include <mpi.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* all_ranks = std::getenv("CONVGRID_TEST_ALL_RANKS");
  if (rank != 0 && !(all_ranks != nullptr && std::string(all_ranks) == "1")) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int local_failed = RUN_ALL_TESTS() != 0 ? 1 : 0;
  int any_failed = 0;
  MPI_Allreduce(&local_failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (local_failed && rank != 0) {
    fprintf(stderr, "rank %d: tests failed\n", rank);
  }
  MPI_Finalize();
  return any_failed;
}
