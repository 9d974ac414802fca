// Fully connected passes (a 1x1 convolution of 1x1 images: x is N x C, w is K x C, y is N x K)
// whose every result element is summed in an order fixed by the code alone: the same bits
// whatever the number of samples per call, so a sample's results do not depend on how the batch
// is split over ranks. oneDNN blocks rows differently for different N (its fc1 results for 22 or
// 16 rows differ from those for 64 in the last bits), hence these for reproducible training.
// Pure; no MPI.
#pragma once

#include <cstdint>

namespace convgrid {

// y[n][k] = sum over c of x[n][c] w[k][c]: sixteen float partial sums over c, then added pairwise.
void fixed_order_fc_forward(int64_t N, int64_t C, int64_t K, const float* x, const float* w,
                            float* y);
// dx[n][c] = sum over k, in order, of dy[n][k] w[k][c].
void fixed_order_fc_backward_data(int64_t N, int64_t C, int64_t K, const float* dy, const float* w,
                                  float* dx);
// acc[k][c] += sum over n, in order, of dy[n][k] x[n][c], in double (each product is exact).
void fixed_order_fc_backward_weights_add(int64_t N, int64_t C, int64_t K, const float* dy,
                                         const float* x, double* acc);

}  // namespace convgrid
