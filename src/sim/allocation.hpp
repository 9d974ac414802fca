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

}  // namespace convgrid::sim
