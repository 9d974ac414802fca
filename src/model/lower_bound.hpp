// Lower bounds on the words a rank must receive in one pass of a convolution layer on P ranks
// (SPEC section 7), so that every report can say how far a plan is from optimal. Pure; no MPI.
//
// The bound depends only on the layer and P, not on the pass: forward, backward-data and
// backward-weights have the same multiply-adds and the same three tensors (In_used, Ker, Out
// or their gradients), only with the roles of "written" and "read" exchanged. The derivation
// is in lower_bound.cpp.
#pragma once

#include <cstdint>

#include "convgrid/conv_shape.hpp"

namespace convgrid {

// The exact counts the bounds are made of.
struct BoundTerms {
  int64_t macs = 0;     // G: multiply-adds that read a real input pixel (padding taps excluded)
  int64_t rho_h = 1;    // most filter taps along h that read the same input row
  int64_t rho_w = 1;    // the same along w
  int64_t in_used = 0;  // input pixels that at least one output reads
  int64_t ker = 0;      // K*C*R*S
  int64_t out = 0;      // N*K*Ho*Wo

  int64_t rho() const { return rho_h * rho_w; }
};

BoundTerms bound_terms(const ConvShape& shape);

// Memory-independent bound on the average words received per rank, for P >= 1 ranks that each
// do G/P multiply-adds and each hold 1/P of every tensor before and after the pass:
//   max(0, 3 * (V^2/rho)^(1/3) - (|In_used| + |Ker| + |Out|) / P),  V = G/P.
// 0 for P = 1. Throws InputError when P < 1.
double words_lower_bound(const ConvShape& shape, int64_t P);

// Memory-dependent bound for ranks of `memory_words` words each (float32 words, not bytes):
//   max(0, M * V / (sqrt(rho) * (2M/3)^(3/2)) - M).
// Throws InputError when P < 1 or memory_words <= 0.
double words_lower_bound_memory(const ConvShape& shape, int64_t P, double memory_words);

}  // namespace convgrid
