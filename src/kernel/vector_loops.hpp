// Element-wise array loops outside oneDNN (the additions of gradients and partial results).
// These and the other hot loops marked CONVGRID_VECTOR_CLONES are compiled three times, for
// AVX-512, AVX2 and the baseline x86-64, and the loader picks the widest the CPU has (GCC's
// target_clones): one binary, the machine's vector width. None of the clones enables FMA, so
// every clone gives the same bits.
#pragma once

#include <cstdint>

#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define CONVGRID_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#endif
#endif
#ifndef CONVGRID_VECTOR_CLONES
#define CONVGRID_VECTOR_CLONES
#endif

namespace convgrid {

// dst[i] += src[i].
void add_into(float* dst, const float* src, int64_t n);
// out[i] = a[i] + b[i].
void add_arrays(const float* a, const float* b, float* out, int64_t n);

}  // namespace convgrid
