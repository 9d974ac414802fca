// The least sum of a step's footprints (src/model/least_footprints): without floors it is the
// closed forms of the AM-GM argument; with floors, for one pass, the water-filling solution
// (the footprints whose floor is above the level at their floor, the others equal); for several
// passes never above the smallest sum a refining search over the shared footprints finds (a lower
// bound must not overshoot) and within 0.1% of it (the search converges slowly where floors make
// kinks). Random floors and X from a fixed seed.
#include "model/least_footprints.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <vector>

namespace convgrid {
namespace {

const std::vector<Pass> kForward{Pass::forward};
const std::vector<Pass> kTwo{Pass::forward, Pass::backward_data};
const std::vector<Pass> kStep{Pass::forward, Pass::backward_data, Pass::backward_weights};

// The primal minimum: footprints In a, Ker b, dOut c free (each at least its floor), the others
// at the least their passes allow, min over (a, b, c) by a grid in log space refined 30 times
// around its best point.
double primal_minimum(const std::vector<Pass>& passes, double X, const FootprintFloors& f) {
  const auto has = [&](Pass p) { return std::find(passes.begin(), passes.end(), p) != passes.end(); };
  const bool fwd = has(Pass::forward), bd = has(Pass::backward_data), bw = has(Pass::backward_weights);
  const auto sum = [&](double a, double b, double c) {
    double s = 0;
    if (fwd || bw) s += a;
    if (fwd || bd) s += b;
    if (bd || bw) s += c;
    if (fwd) s += std::max(f.out, X / (a * b));
    if (bd) s += std::max(f.in, X / (b * c));
    if (bw) s += std::max(f.ker, X / (a * c));
    return s;
  };
  const double top = std::log(3 * (std::cbrt(X) + f.in + f.ker + f.out));
  double lo[3] = {std::log(std::max(f.in, 1e-300)), std::log(std::max(f.ker, 1e-300)), std::log(std::max(f.out, 1e-300))};
  double hi[3] = {top, top, top};
  double best = INFINITY, at[3] = {0, 0, 0};
  for (int round = 0; round < 30; ++round) {
    const int n = 24;
    for (int i = 0; i <= n; ++i) {
      for (int j = 0; j <= n; ++j) {
        for (int k = 0; k <= n; ++k) {
          const double u[3] = {lo[0] + (hi[0] - lo[0]) * i / n, lo[1] + (hi[1] - lo[1]) * j / n,
                               lo[2] + (hi[2] - lo[2]) * k / n};
          const double s = sum(std::exp(u[0]), std::exp(u[1]), std::exp(u[2]));
          if (s < best) best = s, at[0] = u[0], at[1] = u[1], at[2] = u[2];
        }
      }
    }
    const double floor_of[3] = {std::log(std::max(f.in, 1e-300)), std::log(std::max(f.ker, 1e-300)),
                                std::log(std::max(f.out, 1e-300))};
    for (int d = 0; d < 3; ++d) {
      const double w = (hi[d] - lo[d]) / 4;
      lo[d] = std::max(floor_of[d], at[d] - w);
      hi[d] = at[d] + w;
    }
  }
  return best;
}

// One pass: footprints x1 >= x2 >= x3 (sorted floors L1 >= L2 >= L3), product X. If X^(1/3) is
// above every floor, 3 X^(1/3); else x1 = L1 and the other two share X / L1, and so on.
double one_pass_minimum(double X, FootprintFloors f) {
  double L[3] = {f.in, f.ker, f.out};
  std::sort(L, L + 3, std::greater<>());
  if (std::cbrt(X) >= L[0]) return 3 * std::cbrt(X);
  const double two = std::sqrt(X / L[0]);
  if (two >= L[1]) return L[0] + 2 * two;
  return L[0] + L[1] + std::max(L[2], X / (L[0] * L[1]));
}

TEST(LeastFootprints, WithoutFloorsTheClosedForms) {
  for (double X : {1.0, 262144.0, 1.7e14, 3.3e21}) {
    const double c = std::cbrt(X);
    const FootprintFloors none;
    EXPECT_NEAR(least_footprints(kForward, X, none), 3 * c, 1e-12 * c) << X;
    EXPECT_NEAR(least_footprints(kTwo, X, none), 3 * std::cbrt(4.0) * c, 1e-12 * c) << X;
    EXPECT_NEAR(least_footprints(kStep, X, none), 9 / std::cbrt(4.0) * c, 1e-12 * c) << X;
    // Any two passes share one tensor: the same value.
    EXPECT_NEAR(least_footprints({Pass::backward_data, Pass::backward_weights}, X, none),
                3 * std::cbrt(4.0) * c, 1e-12 * c);
  }
}

// ResNet-50's 28x28 1x1 layer with K = 512 at P = 1024 (V = 200704*128*512/1024): every output
// takes only C = 128 multiply-adds, so a rank makes at least V/128 outputs whole, and the least
// forward footprints are 100352 + 2 sqrt(X / 100352) = 181,444, not 3 X^(1/3) = 164,543.
TEST(LeastFootprints, ABindingFloorIsTheCaseOfShortSums) {
  const double V = 200704.0 * 128 * 512 / 1024;
  const FootprintFloors floors{V / 512, V / 200704, V / 128};
  const double X = V * V;
  EXPECT_NEAR(least_footprints(kForward, X, floors), V / 128 + 2 * std::sqrt(X / (V / 128)), 1e-6);
  EXPECT_GT(least_footprints(kForward, X, floors), 3 * std::cbrt(X) + 16000);
}

TEST(LeastFootprints, EqualsThePrimalMinimumAndNeverExceedsIt) {
  std::mt19937_64 rng(20261206);
  std::uniform_real_distribution<double> log_x(std::log(1e2), std::log(1e18)), spread(-3.0, 1.0);
  const std::vector<std::vector<Pass>> sets = {kForward, kTwo, kStep,
                                               {Pass::backward_data, Pass::backward_weights},
                                               {Pass::forward, Pass::backward_weights}};
  for (int trial = 0; trial < 40; ++trial) {
    const double X = std::exp(log_x(rng)), c = std::cbrt(X);
    // Floors around X^(1/3): some bind, some do not.
    const FootprintFloors f{c * std::exp(spread(rng)), c * std::exp(spread(rng)), c * std::exp(spread(rng))};
    for (const auto& passes : sets) {
      const double dual = least_footprints(passes, X, f), primal = primal_minimum(passes, X, f);
      EXPECT_LE(dual, primal * (1 + 1e-12)) << trial;
      EXPECT_GE(dual, primal * (1 - 1e-3)) << trial << " X=" << X << " floors " << f.in << "," << f.ker << "," << f.out;
      if (passes.size() == 1) {
        EXPECT_NEAR(dual, one_pass_minimum(X, f), 1e-9 * dual) << trial;
      }
    }
  }
}

}  // namespace
}  // namespace convgrid
