// Fixed-order fully connected passes (see fixed_order_fc.hpp). Loops are blocked for the caches;
// the blocking never changes the order in which one element's terms are added.
#include "kernel/fixed_order_fc.hpp"

#include <algorithm>

namespace convgrid {
namespace {

// Each kernel is built for AVX-512, AVX2 and plain x86-64 and the loader picks one for the machine;
// no path fuses a multiply and an add (the file is built with -ffp-contract=off, CMakeLists.txt),
// so every path adds the same terms in the same order and gives the same bits.
#define CONVGRID_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

constexpr int kLanes = 16;
constexpr int64_t kRowBlock = 8;  // rows of x (forward, backward-data) or of acc kept hot together

CONVGRID_VECTOR_CLONES float dot(const float* a, const float* b, int64_t n) {
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lanes[j] += a[i + j] * b[i + j];
  }
  float tail = 0.0f;
  for (; i < n; ++i) tail += a[i] * b[i];
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int j = 0; j < width; ++j) lanes[j] += lanes[j + width];
  }
  return lanes[0] + tail;
}

// a[c] += g * x[c] for c in [0, n), in T. Helpers are plain inline functions, not lambdas: a
// lambda would be compiled once for the default target instead of inside each vector clone.
template <class T>
inline void add_scaled(T* a, T g, const float* x, int64_t n) {
  for (int64_t c = 0; c < n; ++c) a[c] += g * static_cast<T>(x[c]);
}

}  // namespace

CONVGRID_VECTOR_CLONES void fixed_order_fc_forward(int64_t N, int64_t C, int64_t K, const float* x,
                                                   const float* w, float* y) {
  for (int64_t n0 = 0; n0 < N; n0 += kRowBlock) {
    const int64_t n1 = std::min(N, n0 + kRowBlock);
    for (int64_t k = 0; k < K; ++k) {
      for (int64_t n = n0; n < n1; ++n) y[n * K + k] = dot(x + n * C, w + k * C, C);
    }
  }
}

CONVGRID_VECTOR_CLONES void fixed_order_fc_backward_data(int64_t N, int64_t C, int64_t K,
                                                         const float* dy, const float* w,
                                                         float* dx) {
  std::fill(dx, dx + N * C, 0.0f);
  for (int64_t n0 = 0; n0 < N; n0 += kRowBlock) {
    const int64_t n1 = std::min(N, n0 + kRowBlock);
    for (int64_t k = 0; k < K; ++k) {
      for (int64_t n = n0; n < n1; ++n) add_scaled(dx + n * C, dy[n * K + k], w + k * C, C);
    }
  }
}

CONVGRID_VECTOR_CLONES void fixed_order_fc_backward_weights_add(int64_t N, int64_t C, int64_t K,
                                                                const float* dy, const float* x,
                                                                double* acc) {
  for (int64_t k0 = 0; k0 < K; k0 += kRowBlock) {
    const int64_t k1 = std::min(K, k0 + kRowBlock);
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t k = k0; k < k1; ++k)
        add_scaled(acc + k * C, static_cast<double>(dy[n * K + k]), x + n * C, C);
    }
  }
}

}  // namespace convgrid
