// Buffer allocation: the allocation point of the SMPI build. Under Open MPI, and in run mode,
// an aligned, zeroed allocation (Buffer's contract: zero-initialised). In model mode under SMPI, buffers of kFoldedBytes or more are
// folded: SMPI_SHARED_MALLOC maps them onto pages shared by every rank (contents are garbage and
// never read: the kernels are skipped), so thousands of simulated ranks fit in one machine.
#pragma once

#include <cstddef>

namespace convgrid::sim {

// 64 KiB: SMPI maps a buffer below its 1 MiB block page by page from the same file, so smaller
// buffers fold too; at 1 MiB the activation slices of a rank's one or two samples mostly did not
// (a 256-rank ResNet-50 training step took 17.6 GB).
inline constexpr size_t kFoldedBytes = size_t{1} << 16;

// `bytes` rounded up to 64 and aligned to 64, zero-filled unless the kernels are skipped (model
// mode reads no buffer); nullptr when out of memory.
void* allocate_buffer_bytes(size_t bytes);
// Releases what allocate_buffer_bytes(bytes) returned.
void free_buffer_bytes(void* p, size_t bytes);

// Held around an MPI collective of tensor data, and nothing else (folding_temporaries), whose
// vectors on this rank are `send_bytes` and `recv_bytes` long. In model and comm modes under SMPI,
// while it lives, SimGrid's own temporary copies of those vectors (64 KiB or more) on this rank
// are folded as well (platforms/folded_collective_temporaries.cpp, which scripts/smpirun.sh
// preloads; without that library, and in every other case, it does nothing). The collective's
// result is then as meaningless as its inputs, which those modes never read.
class FoldedCollective {
 public:
  FoldedCollective(size_t send_bytes, size_t recv_bytes);
  ~FoldedCollective();
  FoldedCollective(const FoldedCollective&) = delete;
  FoldedCollective& operator=(const FoldedCollective&) = delete;

 private:
  bool on_ = false;
};

// Runs `mpi_call` (one MPI collective of tensor data, vectors of `send_bytes` and `recv_bytes` on
// this rank) inside a FoldedCollective; its return code.
template <class MpiCall>
int folding_temporaries(size_t send_bytes, size_t recv_bytes, MpiCall&& mpi_call) {
  const FoldedCollective folded(send_bytes, recv_bytes);
  return mpi_call();
}

}  // namespace convgrid::sim
