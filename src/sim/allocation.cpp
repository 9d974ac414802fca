// Aligned, zeroed buffers; folded shared pages in model mode under SMPI.
#include "sim/allocation.hpp"

#include <cstdlib>
#include <cstring>

#include "sim/compute.hpp"

#ifdef CONVGRID_SMPI
#include <smpi/smpi.h>

// Defined by the preloaded platforms/folded_collective_temporaries.cpp alone: null without it.
extern "C" void convgrid_fold_simulator_temporaries(int delta, size_t send_bytes, size_t recv_bytes)
    __attribute__((weak));
#endif

namespace convgrid::sim {
namespace {

constexpr size_t kAlign = 64;

size_t rounded(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

#ifdef CONVGRID_SMPI
// Whether a buffer of `bytes` lives on SMPI's shared pages (the same answer at its free).
bool folded(size_t bytes) { return kernels_skipped() && bytes >= kFoldedBytes; }
#endif

}  // namespace

void* allocate_buffer_bytes(size_t bytes) {
#ifdef CONVGRID_SMPI
  if (folded(bytes)) return SMPI_SHARED_MALLOC(rounded(bytes));
#endif
  void* p = std::aligned_alloc(kAlign, rounded(bytes));
  // In model mode nothing reads a buffer's contents: no zero-fill (it was a quarter of the host
  // time of a 256-rank ResNet-50 step).
  if (p != nullptr && !kernels_skipped()) std::memset(p, 0, rounded(bytes));
  return p;
}

void free_buffer_bytes(void* p, size_t bytes) {
#ifdef CONVGRID_SMPI
  if (folded(bytes)) {
    SMPI_SHARED_FREE(p);
    return;
  }
#endif
  std::free(p);
}

FoldedCollective::FoldedCollective([[maybe_unused]] size_t send_bytes,
                                   [[maybe_unused]] size_t recv_bytes) {
#ifdef CONVGRID_SMPI
  on_ = kernels_skipped() && convgrid_fold_simulator_temporaries != nullptr;
  if (on_) convgrid_fold_simulator_temporaries(+1, send_bytes, recv_bytes);
#endif
}

FoldedCollective::~FoldedCollective() {
#ifdef CONVGRID_SMPI
  if (on_) convgrid_fold_simulator_temporaries(-1, 0, 0);  // leaves the rank's innermost one
#endif
}

}  // namespace convgrid::sim
