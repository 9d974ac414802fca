// Batch normalisation kernels (train/batch_norm_kernel.hpp) against a float64 BatchNorm2d written
// here (training mode, running statistics, and inference mode), on seeded random tensors with a
// padding sample: the whole tensor as one slice, the tensor cut the ways ranks hold it (partial
// sums added up over the pieces as the all-reduce would), the batch without its padding sample,
// and finite differences of loss = sum over real samples of dy .* y for the reference's and the
// kernels' gradients.
#include "train/batch_norm_kernel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "throws_input_error.hpp"

namespace convgrid {
namespace {

struct Shape {
  int64_t N, C, H, W;

  int64_t plane() const { return H * W; }
  int64_t volume() const { return N * C * plane(); }
  Box4 box() const { return Box4{{Range{0, N}, Range{0, C}, Range{0, H}, Range{0, W}}}; }
  // Offset of element i of plane (n, c) in NCHW storage.
  int64_t at(int64_t n, int64_t c, int64_t i) const { return (n * C + c) * plane() + i; }
};

// A batch with everything batch normalisation reads: activation, parameters, running statistics,
// output gradient and sample weights (1, or 0 for the padding sample).
struct Problem {
  Shape shape;
  std::vector<float> x, gamma, beta, running_mean, running_var, dy, weight;
};

std::vector<float> random_floats(std::mt19937& rng, int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& e : v) e = dist(rng);
  return v;
}

// Channels with different means (offset by 1.5 c) so that the mean matters.
Problem make_problem(Shape s, uint32_t seed, int64_t padding_sample) {
  std::mt19937 rng(seed);
  Problem p{s,
            random_floats(rng, s.volume(), -2.0f, 3.0f),
            random_floats(rng, s.C, -1.5f, 1.5f),
            random_floats(rng, s.C, -1.0f, 1.0f),
            random_floats(rng, s.C, -0.5f, 0.5f),
            random_floats(rng, s.C, 0.5f, 2.0f),
            random_floats(rng, s.volume(), -1.0f, 1.0f),
            std::vector<float>(static_cast<size_t>(s.N), 1.0f)};
  for (int64_t n = 0; n < s.N; ++n) {
    for (int64_t c = 0; c < s.C; ++c) {
      for (int64_t i = 0; i < s.plane(); ++i) p.x[s.at(n, c, i)] += 1.5f * static_cast<float>(c);
    }
  }
  if (padding_sample >= 0) p.weight[padding_sample] = 0.0f;
  return p;
}

// The same batch without its padding samples.
Problem real_samples_only(const Problem& p) {
  Problem q = p;
  const int64_t plane = p.shape.C * p.shape.plane();
  q.x.clear();
  q.dy.clear();
  q.weight.clear();
  for (int64_t n = 0; n < p.shape.N; ++n) {
    if (p.weight[n] == 0.0f) continue;
    q.x.insert(q.x.end(), p.x.begin() + n * plane, p.x.begin() + (n + 1) * plane);
    q.dy.insert(q.dy.end(), p.dy.begin() + n * plane, p.dy.begin() + (n + 1) * plane);
    q.weight.push_back(p.weight[n]);
  }
  q.shape.N = static_cast<int64_t>(q.weight.size());
  return q;
}

std::vector<double> wide(const std::vector<float>& v) { return {v.begin(), v.end()}; }

// ---- The float64 reference: BatchNorm2d over the real samples ----

struct RefForward {
  int64_t count = 0;
  std::vector<double> mean, var, y;  // biased variance; y for every sample
};

RefForward ref_forward(const Shape& s, const std::vector<double>& x,
                       const std::vector<double>& gamma, const std::vector<double>& beta,
                       const std::vector<float>& weight) {
  RefForward f;
  f.mean.assign(s.C, 0.0);
  f.var.assign(s.C, 0.0);
  f.y.assign(x.size(), 0.0);
  for (float w : weight) f.count += w > 0 ? s.plane() : 0;
  for (int64_t c = 0; c < s.C; ++c) {
    for (int64_t n = 0; n < s.N; ++n) {
      if (weight[n] == 0) continue;
      for (int64_t i = 0; i < s.plane(); ++i) f.mean[c] += x[s.at(n, c, i)];
    }
    f.mean[c] /= static_cast<double>(f.count);
    for (int64_t n = 0; n < s.N; ++n) {
      if (weight[n] == 0) continue;
      for (int64_t i = 0; i < s.plane(); ++i) {
        f.var[c] += (x[s.at(n, c, i)] - f.mean[c]) * (x[s.at(n, c, i)] - f.mean[c]);
      }
    }
    f.var[c] /= static_cast<double>(f.count);
    const double inv_std = 1.0 / std::sqrt(f.var[c] + kBnEps);
    for (int64_t n = 0; n < s.N; ++n) {
      for (int64_t i = 0; i < s.plane(); ++i) {
        const int64_t k = s.at(n, c, i);
        f.y[k] = gamma[c] * (x[k] - f.mean[c]) * inv_std + beta[c];
      }
    }
  }
  return f;
}

struct RefBackward {
  std::vector<double> dx, dgamma, dbeta;
};

// Gradients of loss = sum over real samples of dy .* y: with xhat = (x - mean) inv_std,
// dbeta = sum dy, dgamma = sum dy xhat, and, since d mean / dx = 1 / count and
// d var / dx = 2 (x - mean) / count, dx = gamma inv_std (dy - dbeta / count - xhat dgamma / count).
RefBackward ref_backward(const Shape& s, const std::vector<double>& x,
                         const std::vector<double>& gamma, const std::vector<double>& dy,
                         const std::vector<float>& weight, const RefForward& f) {
  RefBackward b{std::vector<double>(x.size(), 0.0), std::vector<double>(s.C, 0.0),
                std::vector<double>(s.C, 0.0)};
  const double count = static_cast<double>(f.count);
  for (int64_t c = 0; c < s.C; ++c) {
    const double inv_std = 1.0 / std::sqrt(f.var[c] + kBnEps);
    for (int64_t n = 0; n < s.N; ++n) {
      if (weight[n] == 0) continue;
      for (int64_t i = 0; i < s.plane(); ++i) {
        const int64_t k = s.at(n, c, i);
        b.dbeta[c] += dy[k];
        b.dgamma[c] += dy[k] * (x[k] - f.mean[c]) * inv_std;
      }
    }
    for (int64_t n = 0; n < s.N; ++n) {
      if (weight[n] == 0) continue;
      for (int64_t i = 0; i < s.plane(); ++i) {
        const int64_t k = s.at(n, c, i);
        const double xhat = (x[k] - f.mean[c]) * inv_std;
        b.dx[k] = gamma[c] * inv_std * (dy[k] - b.dbeta[c] / count - xhat * b.dgamma[c] / count);
      }
    }
  }
  return b;
}

// loss = sum over the real samples of dy .* y.
template <class T>
double real_loss(const Problem& p, const std::vector<T>& y) {
  const int64_t sample = p.shape.C * p.shape.plane();
  double loss = 0;
  for (size_t k = 0; k < y.size(); ++k) {
    if (p.weight[k / sample] > 0) loss += p.dy[k] * static_cast<double>(y[k]);
  }
  return loss;
}

double ref_loss(const Problem& p, const std::vector<double>& x, const std::vector<double>& gamma,
                const std::vector<double>& beta) {
  const Shape& s = p.shape;
  return real_loss(p, ref_forward(s, x, gamma, beta, p.weight).y);
}

// ---- The kernels, on the tensor cut into pieces ----

// A piece's dense storage, gathered from or scattered into the whole NCHW tensor.
std::vector<float> gather(const Slice& piece, const Shape& s, const std::vector<float>& t) {
  const Box4 whole = s.box();
  std::vector<float> out(static_cast<size_t>(piece.size()));
  for_each_run(piece, [&](int64_t n, int64_t c, int64_t y, int64_t x0, int64_t x1, int64_t off) {
    std::copy_n(t.begin() + whole.offset(n, c, y, x0), x1 - x0, out.begin() + off);
  });
  return out;
}

void scatter(const Slice& piece, const Shape& s, const std::vector<float>& local,
             std::vector<float>& t) {
  const Box4 whole = s.box();
  for_each_run(piece, [&](int64_t n, int64_t c, int64_t y, int64_t x0, int64_t x1, int64_t off) {
    std::copy_n(local.begin() + off, x1 - x0, t.begin() + whole.offset(n, c, y, x0));
  });
}

// Adds a piece's per-channel sums (index c - channels.begin) into the whole tensor's: the
// all-reduce.
void add_into(std::vector<double>& total, const std::vector<double>& part, Range channels) {
  for (int64_t c = channels.begin; c < channels.end; ++c) total[c] += part[c - channels.begin];
}

struct KernelResult {
  BnStats stats;
  std::vector<float> y, running_mean, running_var, dx;
  std::vector<double> dgamma, dbeta;
};

// The entries of a per-channel array for the channels `ch`.
template <class T>
std::span<const T> part(const std::vector<T>& v, Range ch) {
  return std::span<const T>(v).subspan(ch.begin, ch.size());
}

// Training forward and backward over the pieces, each as a rank holding it does: every array it
// passes covers its own channels (its box's), sums are added up over the pieces (the all-reduce)
// and each piece forms its statistics from its channels of the total. r.stats and the running
// statistics are the whole tensor's.
KernelResult run_training(const Problem& p, const std::vector<Slice>& pieces) {
  const Shape& s = p.shape;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t count = bn_count(p.weight, s.H, s.W);
  std::vector<std::vector<float>> x, dy;
  for (const Slice& piece : pieces) {
    x.push_back(gather(piece, s, p.x));
    dy.push_back(gather(piece, s, p.dy));
  }
  // Per piece: f(piece, its channels, its part of a, its part of b), added into a and b.
  const auto sums = [&](std::vector<double>& a, std::vector<double>& b, auto&& f) {
    a.assign(s.C, 0.0);
    b.assign(s.C, 0.0);
    for (size_t k = 0; k < pieces.size(); ++k) {
      const Range ch = pieces[k].box.r[1];
      std::vector<double> pa(ch.size(), 0.0), pb(ch.size(), 0.0);
      f(k, ch, pa, pb);
      add_into(a, pa, ch);
      add_into(b, pb, ch);
    }
  };
  // Per piece: f(piece, its channels, its output storage), scattered into `whole`.
  const auto each_output = [&](std::vector<float>& whole, auto&& f) {
    whole.assign(s.volume(), nan);
    for (size_t k = 0; k < pieces.size(); ++k) {
      std::vector<float> out(static_cast<size_t>(pieces[k].size()), nan);
      f(k, pieces[k].box.r[1], out);
      scatter(pieces[k], s, out, whole);
    }
  };

  KernelResult r;
  std::vector<double> sum, sumsq;
  sums(sum, sumsq, [&](size_t k, Range ch, std::vector<double>& a, std::vector<double>& b) {
    bn_partial_sums(pieces[k], x[k].data(), ch, p.weight, a, b);
  });
  r.stats = bn_batch_stats(sum, sumsq, count);
  r.running_mean = p.running_mean;
  r.running_var = p.running_var;
  bn_update_running(r.stats, r.running_mean, r.running_var);
  std::vector<BnStats> stats;  // each piece's, over its channels
  for (const Slice& piece : pieces) {
    stats.push_back(bn_batch_stats(part(sum, piece.box.r[1]), part(sumsq, piece.box.r[1]), count));
  }
  each_output(r.y, [&](size_t k, Range ch, std::vector<float>& out) {
    bn_normalize(pieces[k], x[k].data(), ch, stats[k], part(p.gamma, ch), part(p.beta, ch),
                 out.data());
  });
  sums(r.dbeta, r.dgamma, [&](size_t k, Range ch, std::vector<double>& a, std::vector<double>& b) {
    bn_grad_sums(pieces[k], x[k].data(), dy[k].data(), ch, stats[k], p.weight, a, b);
  });
  each_output(r.dx, [&](size_t k, Range ch, std::vector<float>& out) {
    bn_input_grad(pieces[k], x[k].data(), dy[k].data(), ch, stats[k], part(p.gamma, ch),
                  part(r.dbeta, ch), part(r.dgamma, ch), p.weight, out.data());
  });
  return r;
}

std::vector<Slice> whole_tensor(const Shape& s) { return {Slice::whole(s.box())}; }

// Boxes of the tensor cut along dimension d at the given points.
std::vector<Slice> cut(const Shape& s, int d, std::vector<int64_t> points) {
  std::vector<Slice> out;
  Box4 b = s.box();
  const int64_t end = b.r[d].end;
  points.push_back(end);
  int64_t from = 0;
  for (int64_t to : points) {
    b.r[d] = Range{from, to};
    out.push_back(Slice::whole(b));
    from = to;
  }
  return out;
}

// Every piece of `boxes` split into `parts` with split_block (by channels when it has enough,
// otherwise flat ranges).
std::vector<Slice> split_each(const std::vector<Slice>& boxes, int64_t parts) {
  std::vector<Slice> out;
  for (const Slice& b : boxes) {
    for (int64_t j = 0; j < parts; ++j) out.push_back(split_block(b.box, parts, j));
  }
  return out;
}

// ---- Comparisons ----

// |got - want| <= tol * max(1, |want|) for every element.
template <class T>
void expect_close(const std::vector<T>& got, const std::vector<double>& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_LE(std::abs(static_cast<double>(got[i]) - want[i]),
              tol * std::max(1.0, std::abs(want[i])))
        << what << "[" << i << "]: " << got[i] << " vs " << want[i];
  }
}

template <class T>
void expect_close(const std::vector<T>& got, const std::vector<float>& want, double tol,
                  const std::string& what) {
  expect_close(got, wide(want), tol, what);
}

// The kernels against the float64 reference on problem p.
void expect_matches_reference(const Problem& p, const KernelResult& r, const std::string& what) {
  const Shape& s = p.shape;
  const RefForward f = ref_forward(s, wide(p.x), wide(p.gamma), wide(p.beta), p.weight);
  const RefBackward b = ref_backward(s, wide(p.x), wide(p.gamma), wide(p.dy), p.weight, f);
  std::vector<double> running_mean(s.C), running_var(s.C);
  for (int64_t c = 0; c < s.C; ++c) {
    running_mean[c] = (1 - kBnMomentum) * p.running_mean[c] + kBnMomentum * f.mean[c];
    running_var[c] = (1 - kBnMomentum) * p.running_var[c] +
                     kBnMomentum * f.var[c] * static_cast<double>(f.count) / (f.count - 1);
  }
  EXPECT_EQ(r.stats.count, f.count) << what;
  expect_close(r.stats.mean, f.mean, 1e-12, what + " mean");
  expect_close(r.stats.var, f.var, 1e-10, what + " var");
  expect_close(r.y, f.y, 1e-6, what + " y");
  expect_close(r.running_mean, running_mean, 1e-6, what + " running_mean");
  expect_close(r.running_var, running_var, 1e-6, what + " running_var");
  expect_close(r.dbeta, b.dbeta, 1e-12, what + " dbeta");
  expect_close(r.dgamma, b.dgamma, 1e-10, what + " dgamma");
  expect_close(r.dx, b.dx, 1e-6, what + " dx");
}

const Shape kShape{3, 5, 4, 3};

struct Case {
  Shape shape;
  int64_t padding_sample;
};
// Planes of 12 (one vectorised block and a tail) and of 99, padding in the middle and at the end.
const Case kCases[] = {{kShape, 1}, {{4, 3, 9, 11}, 3}, {{2, 2, 3, 1}, -1}};

TEST(BatchNormKernel, WholeTensorMatchesFloat64Reference) {
  uint32_t seed = 11;
  for (const Case& c : kCases) {
    const Problem p = make_problem(c.shape, seed++, c.padding_sample);
    const KernelResult r = run_training(p, whole_tensor(c.shape));
    expect_matches_reference(p, r, "shape N=" + std::to_string(c.shape.N));
    if (c.padding_sample >= 0) {  // no input gradient for the padding sample
      for (int64_t k = 0; k < c.shape.C * c.shape.plane(); ++k) {
        EXPECT_EQ(r.dx[c.padding_sample * c.shape.C * c.shape.plane() + k], 0.0f);
      }
    }
  }
}

TEST(BatchNormKernel, PiecesAsRanksHoldThemMatchWholeTensor) {
  const Problem p = make_problem(kShape, 7, 1);
  const KernelResult whole = run_training(p, whole_tensor(kShape));
  const std::vector<std::pair<std::string, std::vector<Slice>>> splits = {
      {"samples", cut(kShape, 0, {1})},
      {"rows", cut(kShape, 2, {1, 3})},
      {"columns", cut(kShape, 3, {2})},
      {"channels", split_each(whole_tensor(kShape), 3)},
      {"flat", split_each(whole_tensor(kShape), 7)},  // 7 > C: flat ranges of the whole box
      {"samples then flat", split_each(cut(kShape, 0, {2}), 8)},
      {"rows then flat", split_each(cut(kShape, 2, {3}), 6)},
      {"samples then channels", split_each(cut(kShape, 0, {1, 2}), 2)},
  };
  for (const auto& [name, pieces] : splits) {
    int64_t elements = 0;
    for (const Slice& s : pieces) elements += s.size();
    ASSERT_EQ(elements, kShape.volume()) << name;
    const KernelResult r = run_training(p, pieces);
    expect_matches_reference(p, r, name);
    // Only the order of the double sums differs from the whole tensor's.
    expect_close(r.stats.mean, whole.stats.mean, 1e-13, name + " mean vs whole");
    expect_close(r.stats.inv_std, whole.stats.inv_std, 1e-12, name + " inv_std vs whole");
    expect_close(r.y, whole.y, 1e-6, name + " y vs whole");
    expect_close(r.running_mean, whole.running_mean, 2e-7, name + " running_mean vs whole");
    expect_close(r.running_var, whole.running_var, 2e-7, name + " running_var vs whole");
    expect_close(r.dbeta, whole.dbeta, 1e-13, name + " dbeta vs whole");
    expect_close(r.dgamma, whole.dgamma, 1e-12, name + " dgamma vs whole");
    expect_close(r.dx, whole.dx, 1e-6, name + " dx vs whole");
  }
}

TEST(BatchNormKernel, PaddingSampleChangesNothingOfTheRealOnes) {
  Problem p = make_problem(kShape, 5, 1);
  const Problem real = real_samples_only(p);
  ASSERT_EQ(real.shape.N, 2);
  // Whatever the padding sample holds.
  const int64_t sample = kShape.C * kShape.plane();
  for (int64_t k = 0; k < sample; ++k) {
    p.x[sample + k] = 100.0f + static_cast<float>(k);
    p.dy[sample + k] = -50.0f;
  }
  const KernelResult padded = run_training(p, split_each(whole_tensor(kShape), 7));
  const KernelResult small = run_training(real, whole_tensor(real.shape));
  EXPECT_EQ(padded.stats.count, small.stats.count);
  expect_close(padded.stats.mean, small.stats.mean, 1e-13, "mean");
  expect_close(padded.stats.var, small.stats.var, 1e-12, "var");
  expect_close(padded.running_mean, small.running_mean, 2e-7, "running_mean");
  expect_close(padded.running_var, small.running_var, 2e-7, "running_var");
  expect_close(padded.dbeta, small.dbeta, 1e-13, "dbeta");
  expect_close(padded.dgamma, small.dgamma, 1e-12, "dgamma");
  for (int64_t k = 0; k < sample; ++k) {
    for (int64_t n : {0, 2}) {
      const int64_t m = n == 0 ? 0 : 1;  // the sample's index in the smaller batch
      EXPECT_NEAR(padded.y[n * sample + k], small.y[m * sample + k], 1e-6);
      EXPECT_NEAR(padded.dx[n * sample + k], small.dx[m * sample + k], 1e-6);
    }
    EXPECT_EQ(padded.dx[sample + k], 0.0f);
    EXPECT_TRUE(std::isfinite(padded.y[sample + k]));  // normalised with the batch statistics
  }
}

// Central differences of loss = sum over real samples of dy .* y, each input perturbed in turn.
std::vector<double> finite_differences(std::vector<double>& v, double h,
                                       const std::function<double()>& loss) {
  std::vector<double> g(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const double keep = v[i];
    v[i] = keep + h;
    const double up = loss();
    v[i] = keep - h;
    const double down = loss();
    v[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

TEST(BatchNormKernel, ReferenceGradientsMatchFiniteDifferences) {
  const Problem p = make_problem(kShape, 3, 1);
  std::vector<double> x = wide(p.x), gamma = wide(p.gamma), beta = wide(p.beta);
  const RefForward f = ref_forward(kShape, x, gamma, beta, p.weight);
  const RefBackward b = ref_backward(kShape, x, gamma, wide(p.dy), p.weight, f);
  const auto loss = [&] { return ref_loss(p, x, gamma, beta); };
  expect_close(finite_differences(x, 1e-5, loss), b.dx, 1e-8, "dx");
  expect_close(finite_differences(gamma, 1e-5, loss), b.dgamma, 1e-8, "dgamma");
  expect_close(finite_differences(beta, 1e-5, loss), b.dbeta, 1e-8, "dbeta");
}

// The float kernels' loss, in double, on the whole tensor.
double kernel_loss(const Problem& p) {
  const Shape& s = p.shape;
  const Slice whole = Slice::whole(s.box());
  std::vector<double> sum(s.C, 0.0), sumsq(s.C, 0.0);
  bn_partial_sums(whole, p.x.data(), {0, s.C}, p.weight, sum, sumsq);
  const BnStats stats = bn_batch_stats(sum, sumsq, bn_count(p.weight, s.H, s.W));
  std::vector<float> y(p.x.size());
  bn_normalize(whole, p.x.data(), {0, s.C}, stats, p.gamma, p.beta, y.data());
  return real_loss(p, y);
}

TEST(BatchNormKernel, KernelGradientsMatchFiniteDifferencesOfKernelForward) {
  Problem p = make_problem(kShape, 4, 1);
  const KernelResult r = run_training(p, whole_tensor(kShape));
  // Perturbs p's floats by h (exactly representable steps) through a double view.
  const auto fd = [&](std::vector<float>& v) {
    const std::vector<float> keep = v;
    std::vector<double> view = wide(v);
    const std::vector<double> g = finite_differences(view, 1.0 / 64, [&] {
      for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(view[i]);
      return kernel_loss(p);
    });
    v = keep;
    return g;
  };
  // Float rounding of y divided by 2h, and the central difference's h^2 error: both below 1e-5.
  expect_close(r.dx, fd(p.x), 1e-4, "dx");
  expect_close(r.dgamma, fd(p.gamma), 1e-4, "dgamma");
  expect_close(r.dbeta, fd(p.beta), 1e-4, "dbeta");
}

TEST(BatchNormKernel, InferenceUsesRunningStatistics) {
  const Problem p = make_problem(kShape, 9, 1);
  const BnStats stats = bn_running_stats(p.running_mean, p.running_var);
  const auto pieces = split_each(cut(kShape, 2, {2}), 4);
  std::vector<float> y(p.x.size(), std::numeric_limits<float>::quiet_NaN());
  for (const Slice& piece : pieces) {
    std::vector<float> out(static_cast<size_t>(piece.size()));
    bn_normalize(piece, gather(piece, kShape, p.x).data(), {0, kShape.C}, stats, p.gamma, p.beta,
                 out.data());
    scatter(piece, kShape, out, y);
  }
  std::vector<double> want(y.size());
  for (int64_t n = 0; n < kShape.N; ++n) {  // padding sample included
    for (int64_t c = 0; c < kShape.C; ++c) {
      const double inv_std = 1.0 / std::sqrt(static_cast<double>(p.running_var[c]) + kBnEps);
      for (int64_t i = 0; i < kShape.plane(); ++i) {
        const int64_t k = kShape.at(n, c, i);
        want[k] =
            p.gamma[c] * (p.x[k] - static_cast<double>(p.running_mean[c])) * inv_std + p.beta[c];
      }
    }
  }
  expect_close(y, want, 1e-6, "inference y");
}

TEST(BatchNormKernel, RefusesMismatchedArguments) {
  const Problem p = make_problem(kShape, 1, 1);
  const Slice whole = Slice::whole(kShape.box());
  std::vector<double> sum(kShape.C), sumsq(kShape.C), short_sum(kShape.C - 1);
  EXPECT_TRUE(throws_input_error(
      [&] {
        bn_partial_sums(whole, p.x.data(), {1, kShape.C}, p.weight, short_sum, short_sum);
      },
      {"channels [1, 5)", "[0, 5)"}));
  EXPECT_TRUE(throws_input_error(
      [&] {
        bn_partial_sums(whole, p.x.data(), {0, kShape.C}, p.weight, short_sum, sumsq);
      },
      {"sum has 4 entries for 5 channels"}));
  const std::vector<float> two_weights = {1.0f, 1.0f};
  EXPECT_TRUE(throws_input_error(
      [&] {
        bn_partial_sums(whole, p.x.data(), {0, kShape.C}, two_weights, sum, sumsq);
      },
      {"sample_weight has 2 entries", "samples [0, 3)"}));
  EXPECT_TRUE(throws_input_error([&] { bn_batch_stats(sum, sumsq, 1); }, {"count=1"}));
  const BnStats running = bn_running_stats(p.running_mean, p.running_var);
  std::vector<float> rm = p.running_mean, rv = p.running_var;
  EXPECT_TRUE(throws_input_error([&] { bn_update_running(running, rm, rv); }, {"count=0"}));
  std::vector<float> y(p.x.size());
  EXPECT_TRUE(throws_input_error(
      [&] {
        bn_normalize(whole, p.x.data(), {0, kShape.C}, running, p.gamma,
                     std::span<const float>(p.beta).first(2), y.data());
      },
      {"beta has 2 entries"}));
}

}  // namespace
}  // namespace convgrid
