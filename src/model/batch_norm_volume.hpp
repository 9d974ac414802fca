// Words of distributed batch normalization (train/layers/batch_norm_layer.cpp): a channel's
// elements lie on every rank whose slice's box covers that channel; those ranks (the channel
// group) all-reduce per-channel sums, twice a training step:
//
//   forward   sum and sum of squares over the group's channels   (2 * |channels| doubles)
//   backward  sum of dy and of dy * xhat                          (2 * |channels| doubles)
//
// counted as the communication layer counts an all-reduce of doubles (comm/volume.hpp: two words
// a double). Inference moves nothing. Pure; no MPI.
#pragma once

#include <cstdint>

#include "layout/range.hpp"
#include "model/machine_profile.hpp"
#include "model/redistribution.hpp"

namespace convgrid {

// `rank`'s channel group in a placement: the channels of its slice's box, and how many ranks
// share them and its index among them (in rank order). Ranges of different groups are disjoint.
struct ChannelGroup {
  Range channels;
  int size = 1, index = 0;
};
ChannelGroup channel_group(const Placement& placement, int64_t procs, int64_t rank);

// Words the rank receives in each direction (forward, and backward the same) of one step.
int64_t batch_norm_words(const ChannelGroup& group);

// The busiest rank's words over a training step (both directions), and its modelled time: two
// all-reduces, each 2 * ceil(log2 q) messages' latency and its words' bytes.
struct BatchNormFigures {
  int64_t words_max = 0;
  double time_s = 0;
};
BatchNormFigures batch_norm_figures(const Placement& placement, int64_t procs,
                                    const MachineProfile& profile);

}  // namespace convgrid
