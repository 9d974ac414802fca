// Lower bounds on the words a rank must receive in one pass of a convolution layer on P ranks
// (SPEC section 7), so that every report can say how far a plan is from optimal. Pure; no MPI.
//
// The bound depends only on the layer and P, not on the pass: forward, backward-data and
// backward-weights have the same multiply-adds and the same three tensors (In_used, Ker, Out
// or their gradients), only with the roles of "written" and "read" exchanged. The derivation
// is in lower_bound.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "convgrid/conv_shape.hpp"
#include "convgrid/local_conv.hpp"

namespace convgrid {

// The exact counts the bounds are made of.
struct BoundTerms {
  int64_t macs = 0;     // G: multiply-adds that read a real input pixel (padding taps excluded;
                        // of the channels of one group with groups)
  int64_t rho_h = 1;    // most filter taps along h that read the same input row
  int64_t rho_w = 1;    // the same along w
  int64_t in_used = 0;  // input pixels that at least one output reads
  int64_t ker = 0;      // K*C/groups*R*S
  int64_t out = 0;      // N*K*Ho*Wo
  int64_t ker_used = 0;  // weights of a tap that reads a real pixel for at least one output
  int64_t out_made = 0;  // outputs with at least one tap on a real pixel

  int64_t rho() const { return rho_h * rho_w; }
};

BoundTerms bound_terms(const ConvShape& shape);

// Memory-independent bound on the average words received per rank, for P >= 1 ranks that each
// do G/P multiply-adds and each hold 1/P of every tensor before and after the pass:
//   max(0, least - (|In_used| + |Ker_used| + |Out_made|) / P),  V = G/P,
// least the smallest sum of the three footprints with product >= V^2/rho, each at least its
// floor (V/(Cg R S) outputs, V/(N Ho Wo) weights, V/(Kg rho) input pixels, and no less than 1/P
// of the elements some multiply-add touches): 3 (V^2/rho)^(1/3) where no floor binds
// (model/least_footprints.hpp). 0 for P = 1. Throws InputError when P < 1.
double words_lower_bound(const ConvShape& shape, int64_t P);

// The share of pass `passes[index]` in the bound of a step that runs passes[0..] in order (a
// training step: forward, backward-data, backward-weights). The per-pass bound assumes a rank
// starts the pass holding 1/P of each tensor, which an algorithm that keeps the operands an
// earlier pass gathered (In, Ker, dOut: each read by two of the three passes) breaks, so the
// sum of per-pass bounds does not bound a step. The step's bound instead: with X = V^2/rho,
// each pass's three footprints have product >= X, an operand two passes read is one footprint
// received once (its larger one), and the least sum of the distinct footprints, each at least
// its floor (least_footprints), is without binding floors
//   1 pass : 3 X^(1/3)                        (the bound above)
//   2 passes (one shared operand, a = the shared one):  a s^2 >= X twice over four others s:
//            min a + 4s = 3 * 2^(2/3) X^(1/3)  at a = 2^(2/3) X^(1/3)
//   3 passes (each operand shared by two): a^2 b^2 c^2 o d e >= X^3, by AM-GM on
//            a/2, a/2, b/2, b/2, c/2, c/2, o, d, e:  min = 9 * 2^(-2/3) X^(1/3)
// minus every distinct tensor's 1/P held at rest (In_used, Ker, Out and the gradients of the
// passes: dIn, dKer, dOut), at least 0. B(i), the bound of passes[0..i], is the largest of these over the prefixes (a step
// never needs fewer words than its beginning), and pass i's share is B(i) - B(i-1): the shares
// add up to the step's bound, and the first pass's share is its own bound.
double words_lower_bound_in_step(const ConvShape& shape, int64_t P, const std::vector<Pass>& passes,
                                 size_t index);

// Memory-dependent bound for ranks of `memory_words` words each (float32 words, not bytes):
//   max(0, M * V / (sqrt(rho) * (2M/3)^(3/2)) - M).
// Throws InputError when P < 1 or memory_words <= 0.
double words_lower_bound_memory(const ConvShape& shape, int64_t P, double memory_words);

}  // namespace convgrid
