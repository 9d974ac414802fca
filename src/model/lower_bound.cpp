// The communication lower bounds of SPEC section 7, and why they hold.
//
// Take one rank and the set S of multiply-adds (n,k,c,h,w,r,s) it performs that read a real
// input pixel, |S| = V. Fix a tap (r,s): the multiply-adds of S with that tap, S_rs, are points
// (m = (n,h,w), k, c) of a matrix multiplication, and each determines its three operands
// injectively: Out[n,k,h,w], Ker[k,c,r,s] and In[n,c,y,x] (y, x are functions of h, w for a fixed
// tap). By Loomis-Whitney, |S_rs| <= sqrt(|O_rs| |K_rs| |I_rs|) with O_rs, K_rs, I_rs the
// operands S_rs touches. Summing over taps with Cauchy-Schwarz,
//   V <= sqrt(|O|) * sqrt(sum |K_rs|) * sqrt(sum |I_rs|) <= sqrt(|O| |K| rho |I|),
// because the K_rs are disjoint parts of the rank's weight footprint K, and an input pixel
// lies in at most rho of the I_rs: row y is read by tap r only when r*dh = y + pad (mod sh),
// which picks one r in every sh/gcd(sh,dh) consecutive ones, so at most
// rho_h = ceil(R / (sh/gcd(sh,dh))) taps along h; likewise along w, and rho = rho_h * rho_w.
// Grouped layers (G groups): the argument runs per group (a matrix multiplication of K/G by C/G
// for each tap), V_g <= sqrt(|O_g| |K_g| rho |I_g|) on the group's parts of the footprints, and
// sum_g sqrt(a_g b_g c_g) <= sqrt(sum a_g) sqrt(sum b_g c_g) <= sqrt(sum a_g sum b_g sum c_g)
// (Cauchy-Schwarz, then sum b_g c_g <= sum b_g sum c_g), so the same inequality holds with G the
// grouped multiply-adds and Ker its K*C/G words. For a depthwise layer it is mostly 0: each
// output reads only R*S weights and the input of its own channel, nothing forces a channel's
// sum to be shared, and what remains are halos, which no volume argument bounds below.
// For a fixed product the sum is smallest when the three are equal (AM-GM), so
//   |O| + |K| + |I| >= 3 (V^2/rho)^(1/3).
// The three cannot always be equal: an output takes part in at most Cg*R*S multiply-adds, a
// weight in at most N*Ho*Wo, an input pixel in at most Kg*rho (one per output channel of its
// group and tap reading it), so a rank doing V of them touches at least V/(Cg*R*S) outputs,
// V/(N*Ho*Wo) weights and V/(Kg*rho) input pixels. With those floors the least sum is a convex
// programme (model/least_footprints.hpp); where a floor binds it is larger than the AM-GM value.
// A 1x1 layer with few input channels is the usual case: every output's sum is short, so a rank
// must make many outputs whole (for matrix multiplication this is the case analysis of Al Daas,
// Ballard et al., SPAA 2022).
// The ranks' footprints also cover the tensors: every output with a real tap is summed by some
// rank, every used weight and input pixel read by one, so the footprints of the P ranks add up to
// at least |Out_made|, |Ker_used| and |In_used|. The ranks' least sum of footprints under these
// constraints and each rank's own (a convex set, the same for every rank) is reached with all
// ranks alike: averaging any feasible choice over the permutations of the ranks keeps it
// feasible and its sum. So each floor is also at least 1/P of its tensor. Where padding makes
// the border outputs' sums short, this is the larger floor: V/(Cg R S) counts every output as
// if it had all R*S taps, and would let a rank touch fewer than 1/P of the outputs, which the
// ranks together cannot.
// Every In and Ker word a rank uses but does not hold must be received by it; every output it
// makes a partial sum of but does not own must be received (a partial sum) by its owner. These
// transfers are distinct, and the ranks hold at most |In_used|, |Ker_used|, |Out_made| words of
// the three tensors' footprints between them (each element is held once), so with every rank
// doing V = G/P multiply-adds the words received, summed over ranks, are at least
// P * least - (|In_used| + |Ker_used| + |Out_made|), least the smallest sum of the footprints
// (3 (V^2/rho)^(1/3) where no floor binds).
// Dividing by P gives the memory-independent bound on the average per rank.
//
// Backward passes: backward-data writes dIn (only read pixels get a non-zero gradient) from
// dOut and Ker; backward-weights writes dKer from dOut and In. The multiply-adds and the three
// footprints are the same sets as in forward with the roles of "written" and "read" exchanged,
// so the argument, and the number, are the same for all three passes.
//
// Memory-dependent: with M words per rank, cut a rank's work into segments in each of which it
// moves M words (the last one fewer). Taking, as SPEC section 7 does, the operands of one
// segment to fit in the 2M words of what was held at its start plus what it moved, the sum of
// the three footprints is at most 2M, so a segment does at most sqrt(rho) (2M/3)^(3/2)
// multiply-adds (the product is largest when the three are equal). A rank doing V needs at
// least V / (sqrt(rho) (2M/3)^(3/2)) segments, all but one full:
//   words >= M V / (sqrt(rho) (2M/3)^(3/2)) - M.
// This is the segment argument of Irony, Toledo and Tiskin (JPDC 2004) for matrix multiplication.
#include "model/lower_bound.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "convgrid/error.hpp"
#include "layout/read_pixels.hpp"
#include "model/least_footprints.hpp"

namespace convgrid {
namespace {

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// The real taps along one axis. For tap r the output rows h whose y = h*stride + r*dil - pad
// lies inside [0, in) form one interval, pad - r*dil <= h*stride <= in - 1 + pad - r*dil, whose
// ends never increase with r: pairs counts the (h, r) in them, outputs the rows in their union
// (which may have gaps: a large dilation with large padding), taps the r whose interval is not
// empty.
struct RealLines {
  int64_t pairs = 0, outputs = 0, taps = 0;
};
RealLines real_lines(int64_t in, int64_t out, int64_t taps, int64_t stride, int64_t dil, int64_t pad) {
  RealLines lines;
  int64_t covered = 0;  // the union's rows before this are counted
  for (int64_t r = taps - 1; r >= 0; --r) {  // intervals in order of their first row
    const int64_t lo = std::max<int64_t>(0, ceil_div(pad - r * dil, stride));
    const int64_t end = std::min(out, floor_div(in - 1 + pad - r * dil, stride) + 1);
    if (end <= lo) continue;
    lines.pairs += end - lo;
    lines.outputs += std::max<int64_t>(0, end - std::max(lo, covered));
    covered = std::max(covered, end);
    ++lines.taps;
  }
  return lines;
}

// Most taps of `taps` that read the same input row: one in every stride/gcd(stride, dil).
int64_t taps_per_pixel(int64_t taps, int64_t stride, int64_t dil) {
  return ceil_div(taps, stride / std::gcd(stride, dil));
}

void require_ranks(int64_t P) {
  if (P < 1) throw InputError(fmt::format("lower bound: P={} must be at least 1", P));
}

}  // namespace

BoundTerms bound_terms(const ConvShape& s) {
  const ReadPixels read(s);
  const RealLines h = real_lines(s.H, s.Ho(), s.R, s.stride_h, s.dil_h, s.pad_top);
  const RealLines w = real_lines(s.W, s.Wo(), s.S, s.stride_w, s.dil_w, s.pad_left);
  BoundTerms t;
  // Each factor is at most its counterpart in s.macs(), which validate() keeps within 64 bits.
  t.macs = s.N * s.K * s.Cg() * h.pairs * w.pairs;
  t.rho_h = taps_per_pixel(s.R, s.stride_h, s.dil_h);
  t.rho_w = taps_per_pixel(s.S, s.stride_w, s.dil_w);
  t.in_used = s.N * s.C * read.rows_in({0, s.H}) * read.cols_in({0, s.W});
  t.ker = s.weight_elems();
  t.out = s.output_elems();
  t.ker_used = s.K * s.Cg() * h.taps * w.taps;
  t.out_made = s.N * s.K * h.outputs * w.outputs;
  return t;
}

namespace {

// The floors of a rank's footprints when it and every other of the P ranks do V multiply-adds
// (above): what one rank's V needs, and 1/P of what the ranks' footprints cover together.
FootprintFloors floors(const ConvShape& s, const BoundTerms& t, double V, double P) {
  return {std::max(V / static_cast<double>(s.K / s.groups * t.rho()), static_cast<double>(t.in_used) / P),
          std::max(V / static_cast<double>(s.N * s.Ho() * s.Wo()), static_cast<double>(t.ker_used) / P),
          std::max(V / static_cast<double>(s.Cg() * s.R * s.S), static_cast<double>(t.out_made) / P)};
}

// Elements of the footprints' tensors of `passes` held at rest (each distinct tensor once: In_used,
// Ker_used, Out_made for forward; dIn, Ker, dOut for backward-data; dKer, In, dOut for
// backward-weights; a gradient has its tensor's size).
double held_at_rest(const std::vector<Pass>& passes, const BoundTerms& t) {
  const auto has = [&](Pass p) { return std::find(passes.begin(), passes.end(), p) != passes.end(); };
  const bool fwd = has(Pass::forward), bd = has(Pass::backward_data), bw = has(Pass::backward_weights);
  double held = 0;
  if (fwd || bw) held += static_cast<double>(t.in_used);  // In
  if (fwd || bd) held += static_cast<double>(t.ker_used);  // Ker
  if (fwd) held += static_cast<double>(t.out_made);        // Out
  if (bd || bw) held += static_cast<double>(t.out_made);   // dOut
  if (bd) held += static_cast<double>(t.in_used);          // dIn
  if (bw) held += static_cast<double>(t.ker_used);         // dKer
  return held;
}

// The bound of a step of `passes` (distinct): least footprints less what the ranks hold.
double step_bound(const ConvShape& shape, const BoundTerms& t, int64_t P, const std::vector<Pass>& passes) {
  const double p = static_cast<double>(P);
  const double V = static_cast<double>(t.macs) / p;
  const double least = least_footprints(passes, V * V / static_cast<double>(t.rho()), floors(shape, t, V, p));
  return least - held_at_rest(passes, t) / p;
}

}  // namespace

double words_lower_bound(const ConvShape& shape, int64_t P) {
  require_ranks(P);
  if (P == 1) return 0;
  return std::max(0.0, step_bound(shape, bound_terms(shape), P, {Pass::forward}));
}

double words_lower_bound_in_step(const ConvShape& shape, int64_t P, const std::vector<Pass>& passes,
                                 size_t index) {
  require_ranks(P);
  if (index >= passes.size()) throw Error("words_lower_bound_in_step: index past the passes");
  if (P == 1) return 0;
  const BoundTerms t = bound_terms(shape);
  double before = 0, bound = 0;
  std::vector<Pass> seen;
  for (size_t i = 0; i <= index; ++i) {
    if (std::find(seen.begin(), seen.end(), passes[i]) == seen.end()) seen.push_back(passes[i]);
    before = bound;
    bound = std::max({bound, step_bound(shape, t, P, seen), 0.0});
  }
  return bound - before;
}

double words_lower_bound_memory(const ConvShape& shape, int64_t P, double memory_words) {
  require_ranks(P);
  if (!(memory_words > 0)) {
    throw InputError(fmt::format("lower bound: memory {} words must be positive", memory_words));
  }
  const BoundTerms t = bound_terms(shape);
  const double V = static_cast<double>(t.macs) / static_cast<double>(P);
  const double M = memory_words;
  const double per_segment = std::sqrt(static_cast<double>(t.rho())) * std::pow(2.0 * M / 3.0, 1.5);
  return std::max(0.0, M * V / per_segment - M);
}

}  // namespace convgrid
