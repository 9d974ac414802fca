// Batch normalisation on a slice (see batch_norm_kernel.hpp), one plane run (consecutive elements
// of one sample and channel) at a time: the channel's constants are looked up once per run and
// the inner loops are plain array loops.
#include "train/batch_norm_kernel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>

#include "convgrid/error.hpp"
#include "kernel/vector_loops.hpp"
#include "sim/compute.hpp"

namespace convgrid {
namespace {

// InputError unless `channels` covers the channels of the slice's box.
void check_channels(const Slice& slice, Range channels) {
  const Range c = slice.box.r[1];
  if (slice.empty() || (channels.begin <= c.begin && c.end <= channels.end)) return;
  throw InputError(fmt::format("batch norm: channels [{}, {}) do not cover the slice's [{}, {})",
                               channels.begin, channels.end, c.begin, c.end));
}

// InputError unless a per-channel array has one entry per channel of `channels`.
void check_size(std::string_view what, size_t size, Range channels) {
  if (static_cast<int64_t>(size) == channels.size()) return;
  throw InputError(fmt::format("batch norm: {} has {} entries for {} channels [{}, {})", what, size,
                               channels.size(), channels.begin, channels.end));
}

// InputError unless sample_weight has an entry for every sample of the slice's box.
void check_samples(const Slice& slice, std::span<const float> sample_weight) {
  const Range n = slice.box.r[0];
  const bool covered = n.begin >= 0 && n.end <= static_cast<int64_t>(sample_weight.size());
  if (slice.empty() || covered) return;
  throw InputError(
      fmt::format("batch norm: sample_weight has {} entries, the slice samples [{}, {})",
                  sample_weight.size(), n.begin, n.end));
}

void check_stats(const BnStats& stats, Range channels) {
  check_size("mean", stats.mean.size(), channels);
  check_size("inv_std", stats.inv_std.size(), channels);
}

// Calls f(i, off, len) for every plane run of a real sample, i = channel - channels.begin.
template <class F>
void for_each_real_run(const Slice& slice, Range channels, std::span<const float> sample_weight,
                       F&& f) {
  for_each_plane_run(slice, [&](int64_t n, int64_t c, int64_t off, int64_t len) {
    if (sample_weight[n] > 0) f(c - channels.begin, off, len);
  });
}

// The sums over i < len of p[i] and of p[i] * (q[i] - shift), in double: 32 partial sums of
// each, in four independent groups of eight (the compiler vectorises a group into one register;
// four hide the latency of the additions), added in a fixed order.
CONVGRID_VECTOR_CLONES std::pair<double, double> sum_and_moment(const float* p, const float* q,
                                                                double shift, int64_t len) {
  constexpr int kGroups = 4, kLanes = 8;
  double part_a[kGroups][kLanes] = {}, part_b[kGroups][kLanes] = {};
  int64_t i = 0;
  for (; i + kGroups * kLanes <= len; i += kGroups * kLanes) {
    for (int g = 0; g < kGroups; ++g) {
      for (int j = 0; j < kLanes; ++j) {
        const double pj = p[i + g * kLanes + j];
        part_a[g][j] += pj;
        part_b[g][j] += pj * (q[i + g * kLanes + j] - shift);
      }
    }
  }
  for (; i + kLanes <= len; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      const double pj = p[i + j];
      part_a[0][j] += pj;
      part_b[0][j] += pj * (q[i + j] - shift);
    }
  }
  double a = 0, b = 0;
  for (; i < len; ++i) {
    a += p[i];
    b += p[i] * (q[i] - shift);
  }
  for (int g = 0; g < kGroups; ++g) {
    for (int j = 0; j < kLanes; ++j) {
      a += part_a[g][j];
      b += part_b[g][j];
    }
  }
  return {a, b};
}

BnStats stats_of(std::vector<double> mean, std::vector<double> var, int64_t count, double eps) {
  BnStats s{count, std::move(mean), std::move(var), {}};
  s.inv_std.resize(s.var.size());
  for (size_t i = 0; i < s.var.size(); ++i) s.inv_std[i] = 1.0 / std::sqrt(s.var[i] + eps);
  return s;
}

// out[i] = (v[i] - mean) * scale + shift.
CONVGRID_VECTOR_CLONES void scale_shift_run(const float* v, float mean, float scale, float shift,
                                            float* out, int64_t len) {
  for (int64_t i = 0; i < len; ++i) out[i] = (v[i] - mean) * scale + shift;
}

// out[i] = scale (d[i] - a) - b (v[i] - mean).
CONVGRID_VECTOR_CLONES void input_grad_run(const float* v, const float* d, float mean, float scale,
                                           float a, float b, float* out, int64_t len) {
  for (int64_t i = 0; i < len; ++i) out[i] = scale * (d[i] - a) - b * (v[i] - mean);
}

}  // namespace

int64_t bn_count(std::span<const float> sample_weight, int64_t H, int64_t W) {
  int64_t real = 0;
  for (float w : sample_weight) real += w > 0 ? 1 : 0;
  return real * H * W;
}

void bn_partial_sums(const Slice& slice, const float* x, Range channels,
                     std::span<const float> sample_weight, std::span<double> sum,
                     std::span<double> sumsq) {
  check_channels(slice, channels);
  check_samples(slice, sample_weight);
  check_size("sum", sum.size(), channels);
  check_size("sumsq", sumsq.size(), channels);
  if (sim::kernels_skipped()) return;  // model mode: no local compute (sim/compute.hpp)
  for_each_real_run(slice, channels, sample_weight, [&](int64_t c, int64_t off, int64_t len) {
    const auto [s, sq] = sum_and_moment(x + off, x + off, 0.0, len);
    sum[c] += s;
    sumsq[c] += sq;
  });
}

BnStats bn_batch_stats(std::span<const double> sum, std::span<const double> sumsq, int64_t count,
                       double eps) {
  if (count <= 1) {
    throw InputError(
        fmt::format("batch norm: training needs more than 1 value per channel, count={}", count));
  }
  if (sum.size() != sumsq.size()) {
    throw InputError(
        fmt::format("batch norm: {} sums but {} sums of squares", sum.size(), sumsq.size()));
  }
  std::vector<double> mean(sum.size()), var(sum.size());
  for (size_t c = 0; c < sum.size(); ++c) {
    mean[c] = sum[c] / static_cast<double>(count);
    var[c] = std::max(sumsq[c] / static_cast<double>(count) - mean[c] * mean[c], 0.0);
  }
  return stats_of(std::move(mean), std::move(var), count, eps);
}

void bn_update_running(const BnStats& batch, std::span<float> running_mean,
                       std::span<float> running_var, double momentum) {
  if (batch.count <= 1) {
    throw InputError(fmt::format(
        "batch norm: running statistics need batch statistics over more than 1 value, count={}",
        batch.count));
  }
  const Range channels{0, static_cast<int64_t>(batch.mean.size())};
  check_size("running_mean", running_mean.size(), channels);
  check_size("running_var", running_var.size(), channels);
  const double unbias = static_cast<double>(batch.count) / static_cast<double>(batch.count - 1);
  for (size_t c = 0; c < batch.mean.size(); ++c) {
    running_mean[c] =
        static_cast<float>((1 - momentum) * running_mean[c] + momentum * batch.mean[c]);
    running_var[c] =
        static_cast<float>((1 - momentum) * running_var[c] + momentum * batch.var[c] * unbias);
  }
}

BnStats bn_running_stats(std::span<const float> running_mean, std::span<const float> running_var,
                         double eps) {
  if (running_mean.size() != running_var.size()) {
    throw InputError(fmt::format("batch norm: {} running means but {} running variances",
                                 running_mean.size(), running_var.size()));
  }
  return stats_of({running_mean.begin(), running_mean.end()},
                  {running_var.begin(), running_var.end()}, 0, eps);
}

void bn_normalize(const Slice& slice, const float* x, Range channels, const BnStats& stats,
                  std::span<const float> gamma, std::span<const float> beta, float* y) {
  check_channels(slice, channels);
  check_stats(stats, channels);
  check_size("gamma", gamma.size(), channels);
  check_size("beta", beta.size(), channels);
  if (sim::kernels_skipped()) return;
  for_each_plane_run(slice, [&](int64_t, int64_t ch, int64_t off, int64_t len) {
    const int64_t c = ch - channels.begin;
    const float mean = static_cast<float>(stats.mean[c]);
    const float scale = static_cast<float>(gamma[c] * stats.inv_std[c]);
    scale_shift_run(x + off, mean, scale, beta[c], y + off, len);
  });
}

void bn_grad_sums(const Slice& slice, const float* x, const float* dy, Range channels,
                  const BnStats& stats, std::span<const float> sample_weight,
                  std::span<double> sum_dy, std::span<double> sum_dy_xhat) {
  check_channels(slice, channels);
  check_samples(slice, sample_weight);
  check_stats(stats, channels);
  check_size("sum_dy", sum_dy.size(), channels);
  check_size("sum_dy_xhat", sum_dy_xhat.size(), channels);
  if (sim::kernels_skipped()) return;
  for_each_real_run(slice, channels, sample_weight, [&](int64_t c, int64_t off, int64_t len) {
    // dy * (x - mean) summed, scaled by inv_std once per run.
    const auto [s, centred] = sum_and_moment(dy + off, x + off, stats.mean[c], len);
    sum_dy[c] += s;
    sum_dy_xhat[c] += centred * stats.inv_std[c];
  });
}

void bn_input_grad(const Slice& slice, const float* x, const float* dy, Range channels,
                   const BnStats& stats, std::span<const float> gamma,
                   std::span<const double> sum_dy, std::span<const double> sum_dy_xhat,
                   std::span<const float> sample_weight, float* dx) {
  check_channels(slice, channels);
  check_samples(slice, sample_weight);
  check_stats(stats, channels);
  check_size("gamma", gamma.size(), channels);
  check_size("sum_dy", sum_dy.size(), channels);
  check_size("sum_dy_xhat", sum_dy_xhat.size(), channels);
  if (stats.count <= 0) {
    throw InputError(
        fmt::format("batch norm: input gradient needs batch statistics, count={}", stats.count));
  }
  if (sim::kernels_skipped()) return;
  const double count = static_cast<double>(stats.count);
  // dx = k (dy - a) - b (x - mean), with k = gamma inv_std, a = sum_dy / count and
  // b = k inv_std sum_dy_xhat / count.
  for_each_plane_run(slice, [&](int64_t n, int64_t ch, int64_t off, int64_t len) {
    float* out = dx + off;
    if (!(sample_weight[n] > 0)) {
      std::fill(out, out + len, 0.0f);
      return;
    }
    const int64_t c = ch - channels.begin;
    const double k = gamma[c] * stats.inv_std[c];
    const float scale = static_cast<float>(k), mean = static_cast<float>(stats.mean[c]);
    const float a = static_cast<float>(sum_dy[c] / count);
    const float b = static_cast<float>(k * stats.inv_std[c] * sum_dy_xhat[c] / count);
    input_grad_run(x + off, dy + off, mean, scale, a, b, out, len);
  });
}

}  // namespace convgrid
