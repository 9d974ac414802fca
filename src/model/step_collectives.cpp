// The loss's and the biases' all-reduces of a training step (see step_collectives.hpp).
#include "model/step_collectives.hpp"

#include "comm/volume.hpp"
#include "model/collective_rounds.hpp"
#include "model/pass_cost.hpp"

namespace convgrid {
namespace {

// Whether every pair of ranks `distance` apart that exchange in a round of exchanges at distances
// 1, 2, 4, ... (pairs within aligned blocks of twice the distance) shares a node of `node`
// consecutive ranks: all q on one node, or `node` a power of two above the distance.
// Distance 0: pairs that follow no such pattern (a ring, a renumbering after a fold).
bool inside_nodes(int64_t distance, int64_t q, int64_t node) {
  if (node <= 1) return false;
  if (q <= node) return true;
  return distance > 0 && (node & (node - 1)) == 0 && distance < node;
}

// One round moving `bytes` between ranks `distance` apart.
void add_round(CommLoad& load, int64_t q, int64_t node, int64_t distance, int64_t bytes) {
  const int64_t words = (bytes + 3) / 4;
  ++load.messages;
  if (inside_nodes(distance, q, node)) {
    load.node_steps += 1;
    load.node_words += words;
  } else {
    load.network_steps += 1;
    load.network_words += words;
  }
}

int64_t all_reduce_busiest_words(int64_t floats, int64_t q) { return all_reduce_words(floats, static_cast<int>(q), 0); }

}  // namespace

CommLoad all_reduce_load(int64_t q, int64_t floats, int64_t ranks_per_node) {
  CommLoad load;
  if (q <= 1 || floats <= 0) return load;
  const int64_t bytes = 4 * floats, node = ranks_per_node;
  const int64_t pof2 = int64_t{1} << floor_log2(q);
  const bool folded = pof2 != q;  // the extra ranks fold into the power of two first, and get the result after
  switch (all_reduce_algorithm(q, bytes)) {
    case AllReduce::reduce_broadcast:  // a binomial tree up to rank 0 and one down from it
      for (int tree = 0; tree < 2; ++tree) {
        for (int64_t d = 1; d < q; d *= 2) add_round(load, q, node, d, bytes);
      }
      break;
    case AllReduce::recursive_doubling:
      if (folded) add_round(load, q, node, 1, bytes);
      for (int64_t d = 1; d < pof2; d *= 2) add_round(load, q, node, folded ? 0 : d, bytes);
      if (folded) add_round(load, q, node, 1, bytes);
      break;
    case AllReduce::ring:
      for (int64_t r = 0; r < 2 * (q - 1); ++r) add_round(load, q, node, 0, (bytes + q - 1) / q);
      break;
    case AllReduce::rabenseifner:
      // Recursive halving, the nearest partner first, each round half of what is left; then
      // recursive doubling back, the farthest first (MPICH's order, which SMPI's follows).
      if (folded) add_round(load, q, node, 1, bytes);
      for (int64_t d = 1, part = bytes / 2; d < pof2; d *= 2, part /= 2) add_round(load, q, node, folded ? 0 : d, part);
      for (int64_t d = pof2 / 2, part = bytes / pof2; d >= 1; d /= 2, part *= 2) add_round(load, q, node, folded ? 0 : d, part);
      if (folded) add_round(load, q, node, 1, bytes);
      break;
  }
  return load;
}

StepCollectives step_collectives(bool loss, int64_t batch, const std::vector<int64_t>& bias_sizes,
                                 int64_t procs, const MachineProfile& profile) {
  StepCollectives s;
  const int64_t node = profile.node.ranks;
  const auto time = [&](int64_t floats) { return pass_time(profile, all_reduce_load(procs, floats, node), 0); };
  if (procs <= 1) return s;
  if (loss) {
    for (const int64_t floats : {batch, 2 * batch, batch}) {
      s.loss_words += all_reduce_busiest_words(floats, procs);
      s.loss_time_s += time(floats);
    }
  }
  for (const int64_t k : bias_sizes) {
    s.bias_words += all_reduce_busiest_words(k, procs);
    s.bias_time_s += time(k);
  }
  return s;
}

}  // namespace convgrid
