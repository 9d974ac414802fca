// Element-wise array loops (see vector_loops.hpp).
#include "kernel/vector_loops.hpp"

namespace convgrid {

CONVGRID_VECTOR_CLONES void add_into(float* dst, const float* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

CONVGRID_VECTOR_CLONES void add_arrays(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

}  // namespace convgrid
