// Where a scale layer (nn/network.hpp: a squeeze-and-excitation block's product) wants its gate.
// The gate is N x C x 1 x 1, one value per sample and channel; the scale's input lies in `main`,
// and each rank wants the gate of the samples and channels of its slice of the input, whole: every
// rank of a spatial split (and every part of a block split along its flattened index) wants the
// same values again. Forward, one all-to-all delivers them from the gate's placement (its layer's
// output); backward, each rank's partial sums of the gate's gradient go back the same way and add
// up at the holders (train/box_exchange.hpp). Pure; no MPI.
#pragma once

#include <cstdint>
#include <optional>

#include "model/redistribution.hpp"

namespace convgrid {

// The gate tensor of a scale whose input is `main`'s tensor: N x C x 1 x 1.
Box4 gate_tensor(const Placement& main);

// Rank `rank`'s wanted gate: its input slice's samples x channels (the slice's box), x 1 x 1;
// empty where the slice is.
Slice gate_wanted(const Placement& main, int64_t rank);

// Every rank's gate_wanted added up against a box (SliceSum), where the wanted boxes are every
// combination of some disjoint sample ranges and channel ranges, each combination wanted by the
// same number of ranks (a grid's blocks: once for each of its non-empty blocks of rows and
// columns); none otherwise.
std::optional<SliceSum> gate_wanted_sum(const Placement& main);

// Words each rank receives moving the gate from `gate` (its layer's output placement) into every
// rank's gate_wanted, forward, and the gradient's partial sums back, as the all-to-all counts them
// (model/redistribution.hpp's rules: what a rank holds itself does not move). The time model
// counts every word as crossing the network.
RedistributionFigures gate_figures(const Placement& gate, const Placement& main);

}  // namespace convgrid
