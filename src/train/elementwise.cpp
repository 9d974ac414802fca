// ReLU, ReLU6 and bias on a slice, one run (consecutive elements of one sample and channel) at
// a time.
#include "train/elementwise.hpp"

#include "kernel/vector_loops.hpp"
#include "sim/compute.hpp"

namespace convgrid {

CONVGRID_VECTOR_CLONES void relu_forward(float* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = data[i] > 0.0f ? data[i] : 0.0f;
}

CONVGRID_VECTOR_CLONES void relu_backward(const float* y, float* grad, int64_t n) {
  for (int64_t i = 0; i < n; ++i) grad[i] = y[i] > 0.0f ? grad[i] : 0.0f;
}

CONVGRID_VECTOR_CLONES void relu6_forward(float* data, int64_t n) {
  for (int64_t i = 0; i < n; ++i) data[i] = relu6(data[i]);
}

CONVGRID_VECTOR_CLONES void relu6_backward(const float* y, float* grad, int64_t n) {
  for (int64_t i = 0; i < n; ++i) grad[i] = relu6_passes(y[i]) ? grad[i] : 0.0f;
}

void add_bias(const Slice& slice, const float* bias, float* out) {
  if (sim::kernels_skipped()) return;  // model mode: no local compute (sim/compute.hpp)
  for_each_plane_run(slice, [&](int64_t, int64_t c, int64_t off, int64_t len) {
    const float b = bias[c];
    float* o = out + off;
    for (int64_t i = 0; i < len; ++i) o[i] += b;
  });
}

namespace {

template <class Acc>
void accumulate_bias_grad_into(const Slice& slice, const float* dout, Acc* dbias) {
  if (sim::kernels_skipped()) return;
  for_each_plane_run(slice, [&](int64_t, int64_t c, int64_t off, int64_t len) {
    // Eight partial sums (the compiler vectorises them), added in a fixed order.
    float part[8] = {};
    const float* d = dout + off;
    int64_t i = 0;
    for (; i + 8 <= len; i += 8) {
      for (int j = 0; j < 8; ++j) part[j] += d[i + j];
    }
    float sum = 0;
    for (; i < len; ++i) sum += d[i];
    for (int j = 0; j < 8; ++j) sum += part[j];
    dbias[c] += sum;
  });
}

}  // namespace

void accumulate_bias_grad(const Slice& slice, const float* dout, float* dbias) {
  accumulate_bias_grad_into(slice, dout, dbias);
}

void accumulate_bias_grad(const Slice& slice, const float* dout, double* dbias) {
  accumulate_bias_grad_into(slice, dout, dbias);
}

}  // namespace convgrid
