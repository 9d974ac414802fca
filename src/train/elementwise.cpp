// ReLU and bias on a slice, one run (consecutive elements of one channel) at a time.
#include "train/elementwise.hpp"

namespace convgrid {

void relu_forward(float* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = data[i] > 0.0f ? data[i] : 0.0f;
}

void relu_backward(const float* y, float* grad, int64_t n) {
  for (int64_t i = 0; i < n; ++i) grad[i] = y[i] > 0.0f ? grad[i] : 0.0f;
}

void add_bias(const Slice& slice, const float* bias, float* out) {
  for_each_run(slice, [&](int64_t, int64_t c, int64_t, int64_t x0, int64_t x1, int64_t off) {
    const float b = bias[c];
    for (int64_t i = 0; i < x1 - x0; ++i) out[off + i] += b;
  });
}

void accumulate_bias_grad(const Slice& slice, const float* dout, float* dbias) {
  for_each_run(slice, [&](int64_t, int64_t c, int64_t, int64_t x0, int64_t x1, int64_t off) {
    float sum = 0;
    for (int64_t i = 0; i < x1 - x0; ++i) sum += dout[off + i];
    dbias[c] += sum;
  });
}

}  // namespace convgrid
