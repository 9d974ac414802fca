// MPI for a unit test program that needs a communicator (DistNet, a training layer's bind): one
// rank, a singleton, initialised before the first test and finalised after the last. Included
// once per test program.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace convgrid::test_mpi {

// Runs `f` with LeakSanitizer ignoring what it allocates and keeps. Open MPI's initialisation and
// finalisation keep allocations to the end of the process, which the sanitizer build's leak
// check (scripts/test.sh) would report although they are not this project's.
template <class F>
void ignoring_leaks(F&& f) {
#if defined(__SANITIZE_ADDRESS__)
  __lsan_disable();
  f();
  __lsan_enable();
#else
  f();
#endif
}

class OneRankMpi : public ::testing::Environment {
 public:
  void SetUp() override {
    ignoring_leaks([] { MPI_Init(nullptr, nullptr); });
  }
  void TearDown() override {
    ignoring_leaks([] { MPI_Finalize(); });
  }
};

inline ::testing::Environment* const kOneRankMpi =
    ::testing::AddGlobalTestEnvironment(new OneRankMpi);

}  // namespace convgrid::test_mpi
