// Batch normalisation on one rank's Slice of an activation N x C x H x W (PyTorch BatchNorm2d,
// training mode: the batch's biased variance normalises, the running variance is the unbiased
// one). Dimension 0 of the slice's box is the sample n (global index into the batch), dimension 1
// the channel c. Nothing moves here: the kernels form per-channel partial sums over what the rank
// holds, the caller all-reduces them over every rank holding part of a channel, and the kernels
// apply the global sums.
//
// Padding: sample n is real when sample_weight[n] > 0 (sample_weight covers the whole batch,
// N entries). Padding samples (weight 0) enter no sum, so every result equals PyTorch's on the
// batch of real samples only; their outputs are still normalised with the batch statistics and
// their input gradient is 0. The weights are flags: they do not scale the statistics.
//
// Per-channel arrays (sums, statistics, gamma, beta) are indexed by c - channels.begin, where
// `channels` covers every channel of the slice; each array has channels.size() entries.
// Activations (x, y, dy, dx) are the slice's dense storage, in its flattening order; outputs do
// not alias inputs. count is the number of elements each channel's global sums ran over:
// (real samples) x H x W, bn_count.
//
// Forward, training:   sum[c]  += x,  sumsq[c] += x^2           (bn_partial_sums; all-reduce)
//                      mean = sum / count,  var = sumsq / count - mean^2  (biased),
//                      inv_std = 1 / sqrt(var + eps)           (bn_batch_stats)
//                      y = gamma[c] * (x - mean[c]) * inv_std[c] + beta[c]  (bn_normalize)
//   running_mean = (1 - m) running_mean + m mean,
//   running_var  = (1 - m) running_var  + m var * count / (count - 1)   (bn_update_running)
// Forward, inference:  the same y with running_mean and 1 / sqrt(running_var + eps)
//                      (bn_running_stats, then bn_normalize).
// Backward:            xhat = (x - mean[c]) * inv_std[c],
//                      sum_dy[c] += dy,  sum_dy_xhat[c] += dy * xhat   (bn_grad_sums; all-reduce)
//                      dx = gamma[c] * inv_std[c] * (dy - sum_dy[c] / count
//                                                    - xhat * sum_dy_xhat[c] / count)
//                                                           (bn_input_grad)
//                      dgamma = sum_dy_xhat,  dbeta = sum_dy  (the all-reduced sums themselves)
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "layout/box.hpp"
#include "layout/range.hpp"

namespace convgrid {

inline constexpr double kBnEps = 1e-5;
inline constexpr double kBnMomentum = 0.1;

// Per-channel statistics the kernels normalise with (index c - channels.begin).
struct BnStats {
  int64_t count = 0;            // elements per channel behind the statistics (0: running ones)
  std::vector<double> mean;     // batch mean, or running_mean
  std::vector<double> var;      // biased batch variance, or running_var
  std::vector<double> inv_std;  // 1 / sqrt(var + eps)
};

// Elements per channel over the real samples of the batch: (samples of weight > 0) x H x W.
int64_t bn_count(std::span<const float> sample_weight, int64_t H, int64_t W);

// sum[c] += x and sumsq[c] += x^2 over the slice's elements of real samples, in double.
void bn_partial_sums(const Slice& slice, const float* x, Range channels,
                     std::span<const float> sample_weight, std::span<double> sum,
                     std::span<double> sumsq);

// Mean, biased variance (sumsq / count - mean^2, at least 0) and inv_std from the global sums.
// (In double, the difference loses accuracy only where |mean| is thousands of times the spread.)
// InputError unless count > 1 (PyTorch refuses one value per channel in training).
BnStats bn_batch_stats(std::span<const double> sum, std::span<const double> sumsq, int64_t count,
                       double eps = kBnEps);

// running = (1 - momentum) running + momentum batch, with the variance made unbiased
// (var * count / (count - 1)).
void bn_update_running(const BnStats& batch, std::span<float> running_mean,
                       std::span<float> running_var, double momentum = kBnMomentum);

// The statistics of inference: mean = running_mean, inv_std = 1 / sqrt(running_var + eps).
BnStats bn_running_stats(std::span<const float> running_mean, std::span<const float> running_var,
                         double eps = kBnEps);

// y = gamma[c] * (x - mean[c]) * inv_std[c] + beta[c] for every element of the slice, padding
// samples included.
void bn_normalize(const Slice& slice, const float* x, Range channels, const BnStats& stats,
                  std::span<const float> gamma, std::span<const float> beta, float* y);

// sum_dy[c] += dy and sum_dy_xhat[c] += dy * (x - mean[c]) * inv_std[c] over the slice's
// elements of real samples, in double. After the all-reduce they are dbeta and dgamma.
void bn_grad_sums(const Slice& slice, const float* x, const float* dy, Range channels,
                  const BnStats& stats, std::span<const float> sample_weight,
                  std::span<double> sum_dy, std::span<double> sum_dy_xhat);

// dx = gamma[c] * inv_std[c] * (dy - sum_dy[c] / count - xhat * sum_dy_xhat[c] / count) for the
// elements of real samples, 0 for those of padding samples; sums global, count = stats.count.
void bn_input_grad(const Slice& slice, const float* x, const float* dy, Range channels,
                   const BnStats& stats, std::span<const float> gamma,
                   std::span<const double> sum_dy, std::span<const double> sum_dy_xhat,
                   std::span<const float> sample_weight, float* dx);

}  // namespace convgrid
