// The least sum of the footprints a rank's share of a step's passes must touch, the core of the
// lower bounds (model/lower_bound.cpp). Pure; no MPI.
//
// A pass (forward, backward-data, backward-weights) multiplies over three tensors, and a rank
// doing V of its multiply-adds touches footprints x, y, z of them with x y z >= X = V^2/rho
// (Loomis-Whitney, lower_bound.cpp). A tensor two passes read (In, Ker, dOut) is one footprint.
// Every footprint also has a floor: each element of a tensor takes part in at most so many
// multiply-adds (an output in Cg R S, a weight in N Ho Wo, an input pixel in Kg rho), so a rank
// doing V of them touches at least V / that many. The least sum of the distinct footprints
//
//   minimise sum_i x_i   subject to   x_i >= L_i,   prod_{i in pass p} x_i >= X  (each pass p)
//
// is a convex programme in u_i = log x_i. Its Lagrangian dual, with one multiplier l_p >= 0 per
// pass and m_i = sum of the l_p of the passes footprint i takes part in, is
//
//   g(l) = sum_p l_p log X + sum_i h_i(m_i),  h_i(m) = m - m log m  (m >= L_i),  L_i - m log L_i,
//
// concave and continuously differentiable. Every l gives g(l) <= the minimum (weak duality),
// so whatever the ascent reaches is a valid lower bound; Slater's condition holds, so its maximum
// is the minimum. The ascent starts from the multipliers of the programme without floors (the
// closed forms 3 X^(1/3), 3 2^(2/3) X^(1/3), 9 2^(-2/3) X^(1/3) for one, two and three passes),
// which are optimal when no floor binds, and then climbs one multiplier at a time.
#pragma once

#include <vector>

#include "convgrid/local_conv.hpp"

namespace convgrid {

// The floors of the three kinds of footprint: input pixels (In, dIn), weights (Ker, dKer) and
// outputs (Out, dOut).
struct FootprintFloors {
  double in = 0, ker = 0, out = 0;
};

// The least sum of the distinct footprints of `passes` (each counted once; order and repeats do
// not matter), a lower bound that is at most 1e-12 relative below the exact minimum. X > 0;
// floors >= 0. Error for an empty list.
double least_footprints(const std::vector<Pass>& passes, double X, const FootprintFloors& floors);

}  // namespace convgrid
