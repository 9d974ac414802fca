// The channel groups of a placement and their all-reduces.
#include "model/batch_norm_volume.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "comm/volume.hpp"

namespace convgrid {

ChannelGroup channel_group(const Placement& placement, int64_t procs, int64_t rank) {
  ChannelGroup g{placement.slice(rank).box.r[1], 0, 0};
  for (int64_t r = 0; r < procs; ++r) {
    if (placement.slice(r).box.r[1] != g.channels) continue;
    if (r < rank) ++g.index;
    ++g.size;
  }
  return g;
}

int64_t batch_norm_words(const ChannelGroup& g) {
  return 2 * all_reduce_words(2 * g.channels.size(), g.size, g.index);
}

BatchNormFigures batch_norm_figures(const Placement& placement, int64_t procs,
                                    const MachineProfile& profile) {
  // Every group at once: members by channel range, in rank order.
  std::map<std::pair<int64_t, int64_t>, int> members;
  for (int64_t r = 0; r < procs; ++r) {
    const Range c = placement.slice(r).box.r[1];
    ++members[{c.begin, c.end}];
  }
  BatchNormFigures f;
  int largest = 1;
  std::map<std::pair<int64_t, int64_t>, int> seen;
  for (int64_t r = 0; r < procs; ++r) {
    const Range c = placement.slice(r).box.r[1];
    const int size = members[{c.begin, c.end}];
    const int index = seen[{c.begin, c.end}]++;
    f.words_max = std::max(f.words_max, 2 * batch_norm_words(ChannelGroup{c, size, index}));
    largest = std::max(largest, size);
  }
  const double rounds = largest > 1 ? 2 * std::ceil(std::log2(largest)) : 0;
  f.time_s = 2 * (rounds * profile.alpha_s) +
             4.0 * static_cast<double>(f.words_max) * profile.beta_s_per_byte;
  return f;
}

}  // namespace convgrid
