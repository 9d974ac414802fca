// The gate's wanted slices and their figures (see gate_spread.hpp).
#include "model/gate_spread.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "convgrid/error.hpp"

namespace convgrid {

Box4 gate_tensor(const Placement& main) {
  const Box4& t = main.tensor();
  return Box4{{t.r[0], t.r[1], Range{0, 1}, Range{0, 1}}};
}

Slice gate_wanted(const Placement& main, int64_t rank) {
  const Slice s = main.slice(rank);
  if (s.empty()) return {};
  return Slice::whole(Box4{{s.box.r[0], s.box.r[1], Range{0, 1}, Range{0, 1}}});
}

namespace {

using Pair = std::pair<std::pair<int64_t, int64_t>, std::pair<int64_t, int64_t>>;  // samples, channels

// Each distinct wanted box (samples, channels) and how many ranks want it.
std::map<Pair, int64_t> wanted_boxes(const Placement& main) {
  std::map<Pair, int64_t> boxes;
  for (int64_t r = 0; r < main.dims().size(); ++r) {
    const Slice w = gate_wanted(main, r);
    if (w.empty()) continue;
    ++boxes[{{w.box.r[0].begin, w.box.r[0].end}, {w.box.r[1].begin, w.box.r[1].end}}];
  }
  return boxes;
}

bool disjoint(const std::set<std::pair<int64_t, int64_t>>& ranges) {
  int64_t end = std::numeric_limits<int64_t>::min();
  for (const auto& [b, e] : ranges) {  // in order of their beginnings
    if (b < end) return false;
    end = e;
  }
  return true;
}

// sum over ranks r' of |b ∩ gate_wanted(r')|.
int64_t wanted_overlap(const std::optional<SliceSum>& sum, const std::map<Pair, int64_t>& boxes, const Box4& b) {
  if (sum) return sum->overlap(b);
  int64_t n = 0;
  for (const auto& [box, count] : boxes) {
    const Box4 w{{Range{box.first.first, box.first.second}, Range{box.second.first, box.second.second}, Range{0, 1},
                  Range{0, 1}}};
    n += count * w.intersect(b).volume();
  }
  return n;
}

}  // namespace

std::optional<SliceSum> gate_wanted_sum(const Placement& main) {
  const std::map<Pair, int64_t> boxes = wanted_boxes(main);
  std::set<std::pair<int64_t, int64_t>> samples, channels;
  std::set<int64_t> counts;
  for (const auto& [box, count] : boxes) {
    samples.insert(box.first);
    channels.insert(box.second);
    counts.insert(count);
  }
  if (boxes.empty()) return SliceSum({});
  if (counts.size() != 1 || boxes.size() != samples.size() * channels.size() || !disjoint(samples) ||
      !disjoint(channels)) {
    return std::nullopt;
  }
  std::array<std::vector<Range>, 4> ranges;
  for (const auto& [b, e] : samples) ranges[0].push_back({b, e});
  for (const auto& [b, e] : channels) ranges[1].push_back({b, e});
  ranges[2].assign(static_cast<size_t>(*counts.begin()), Range{0, 1});  // each combination's ranks
  ranges[3].push_back({0, 1});
  return SliceSum(std::move(ranges));
}

RedistributionFigures gate_figures(const Placement& gate, const Placement& main) {
  if (!same_extents(gate.tensor(), gate_tensor(main))) {
    throw Error("gate_figures: the gate is not N x C x 1 x 1 of the scale's input");
  }
  const int64_t ranks = main.dims().size();
  if (gate.dims().size() != ranks) throw Error("gate_figures: the two placements have different rank counts");
  const std::optional<SliceSum> sum = gate_wanted_sum(main);
  const std::map<Pair, int64_t> boxes = sum ? std::map<Pair, int64_t>{} : wanted_boxes(main);
  RedistributionFigures f;
  int64_t total_forward = 0, total_backward = 0;
  for (int64_t r = 0; r < ranks; ++r) {
    const Slice held = gate.slice(r), wanted = gate_wanted(main, r);
    const int64_t both = held.empty() || wanted.empty() ? 0 : slice_overlap(held, gate.tensor(), wanted, gate.tensor());
    const int64_t forward = wanted.size() - both;
    int64_t backward = 0;
    if (!held.empty()) {
      for_each_box(held, [&](const Box4& b) { backward += wanted_overlap(sum, boxes, b); });
      backward -= both;
    }
    f.forward.max_words = std::max(f.forward.max_words, forward);
    f.backward.max_words = std::max(f.backward.max_words, backward);
    total_forward += forward;
    total_backward += backward;
  }
  f.forward.mean_words = static_cast<double>(total_forward) / static_cast<double>(ranks);
  f.backward.mean_words = static_cast<double>(total_backward) / static_cast<double>(ranks);
  for (RedistributionStats* stats : {&f.forward, &f.backward}) {
    stats->max_load.messages = redistribution_messages(ranks, *stats);
    stats->max_load.network_steps = static_cast<double>(stats->max_load.messages);
    stats->max_load.network_words = stats->max_words;
  }
  return f;
}

}  // namespace convgrid
