// The dual ascent of least_footprints (see least_footprints.hpp).
#include "model/least_footprints.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>

#include "convgrid/error.hpp"

namespace convgrid {
namespace {

// The six footprints and, for each pass, the three it multiplies over.
enum Footprint { in, ker, dout, out, din, dker, kFootprints };
constexpr std::array<std::array<Footprint, 3>, 3> kPassFootprints = {{
    {out, ker, in},     // forward: Out from Ker and In
    {din, ker, dout},   // backward-data: dIn from Ker and dOut
    {dker, in, dout},   // backward-weights: dKer from In and dOut
}};

class Dual {
 public:
  Dual(const std::vector<Pass>& passes, double X, const FootprintFloors& f) : log_x_(std::log(X)) {
    for (Pass p : passes) {
      const auto k = static_cast<size_t>(p);
      if (std::find(passes_.begin(), passes_.end(), k) == passes_.end()) passes_.push_back(k);
    }
    floor_ = {f.in, f.ker, f.out, f.out, f.in, f.ker};
    for (size_t p : passes_) {
      for (Footprint i : kPassFootprints[p]) used_[i] = true;
    }
  }

  size_t passes() const { return passes_.size(); }

  // g(l) for the multipliers of passes_, in order.
  double operator()(const std::vector<double>& l) const {
    std::array<double, kFootprints> m{};
    double g = 0;
    for (size_t q = 0; q < passes_.size(); ++q) {
      g += l[q] * log_x_;
      for (Footprint i : kPassFootprints[passes_[q]]) m[i] += l[q];
    }
    for (int i = 0; i < kFootprints; ++i) {
      if (!used_[i]) continue;
      const double L = floor_[i];
      g += m[i] >= L && m[i] > 0 ? m[i] - m[i] * std::log(m[i]) : L - (m[i] > 0 ? m[i] * std::log(L) : 0.0);
    }
    return g;
  }

  // A feasible sum: every footprint at the larger of its floor and X^(1/3) (each pass's product
  // is then at least X). No multiplier of the optimum exceeds it.
  double feasible_sum() const {
    const double cube = std::exp(log_x_ / 3);
    double s = 0;
    for (int i = 0; i < kFootprints; ++i) {
      if (used_[i]) s += std::max(floor_[i], cube);
    }
    return s;
  }

 private:
  double log_x_;
  std::vector<size_t> passes_;
  std::array<double, kFootprints> floor_{};
  std::array<bool, kFootprints> used_{};
};

// The largest g along the line l + t d, t such that every multiplier stays in [0, hi] (g is
// concave: golden-section search); moves l there when that is higher than g(l) = `now`.
double climb(const Dual& g, std::vector<double>& l, const std::vector<double>& d, double hi, double now) {
  double lo_t = -INFINITY, hi_t = INFINITY;
  for (size_t q = 0; q < l.size(); ++q) {
    if (d[q] > 0) {
      lo_t = std::max(lo_t, -l[q] / d[q]);
      hi_t = std::min(hi_t, (hi - l[q]) / d[q]);
    } else if (d[q] < 0) {
      lo_t = std::max(lo_t, (hi - l[q]) / d[q]);
      hi_t = std::min(hi_t, -l[q] / d[q]);
    }
  }
  if (!(hi_t > lo_t)) return now;
  const auto at = [&](double t) {
    std::vector<double> m = l;
    for (size_t q = 0; q < l.size(); ++q) m[q] = std::max(0.0, l[q] + t * d[q]);
    return g(m);
  };
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double a = lo_t, b = hi_t, c = b - phi * (b - a), e = a + phi * (b - a);
  double gc = at(c), ge = at(e);
  while (b - a > 1e-15 * hi) {
    if (gc < ge) {
      a = c, c = e, gc = ge, e = a + phi * (b - a), ge = at(e);
    } else {
      b = e, e = c, ge = gc, c = b - phi * (b - a), gc = at(c);
    }
  }
  const double t = gc >= ge ? c : e, got = std::max(gc, ge);
  if (got <= now) return now;
  for (size_t q = 0; q < l.size(); ++q) l[q] = std::max(0.0, l[q] + t * d[q]);
  return got;
}

// Line searches along each multiplier, each pair's sum and difference, and all together, until
// a round gains nothing: in three dimensions this walks along the ridges where floors bind, on
// which one multiplier at a time stalls.
double ascend(const std::vector<Pass>& passes, double X, const FootprintFloors& floors) {
  const Dual g(passes, X, floors);
  const size_t n = g.passes();
  std::vector<std::vector<double>> directions;
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> d(n, 0.0);
    d[i] = 1;
    directions.push_back(d);
    for (size_t j = i + 1; j < n; ++j) {
      for (double sign : {1.0, -1.0}) {
        std::vector<double> e = d;
        e[j] = sign;
        directions.push_back(e);
      }
    }
  }
  if (n > 2) directions.emplace_back(n, 1.0);
  // The multipliers without floors: a footprint of one pass equals its multiplier, l = x; with two
  // passes the own footprints are (X/2)^(1/3), with three (X/4)^(1/3).
  std::vector<double> l(n, std::cbrt(X / static_cast<double>(1 << (n - 1))));
  double best = g(l);
  const double hi = 2 * g.feasible_sum();
  for (int round = 0; round < 500; ++round) {
    const double before = best;
    for (const auto& d : directions) best = climb(g, l, d, hi, best);
    if (best - before <= 1e-15 * std::abs(best)) break;
  }
  return best;
}

}  // namespace

double least_footprints(const std::vector<Pass>& passes, double X, const FootprintFloors& floors) {
  if (passes.empty()) throw Error("least_footprints: no pass");
  if (!(X > 0)) return 0;  // no multiply-adds: nothing is forced
  // Planning evaluates the same layer for every grid: the answers are kept.
  using Key = std::tuple<std::vector<Pass>, double, double, double, double>;
  static std::mutex mutex;
  static std::map<Key, double> known;
  const Key key{passes, X, floors.in, floors.ker, floors.out};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = known.find(key); it != known.end()) return it->second;
  }
  const double least = ascend(passes, X, floors);
  const std::lock_guard<std::mutex> lock(mutex);
  known.emplace(key, least);
  return least;
}

}  // namespace convgrid
