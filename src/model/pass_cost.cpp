// Seconds from words, messages and flops.
#include "model/pass_cost.hpp"

#include <algorithm>

namespace convgrid {

PassTime pass_time_parts(const MachineProfile& m, const CommLoad& load, double flops) {
  constexpr double kBytesPerWord = sizeof(float);
  // Without a node level every link is the network's (the volume functions then put nothing on
  // the node; a node part computed for another profile is charged at the network's rates).
  const NodeLinks node = m.node.ranks > 0 ? m.node : NodeLinks{0, m.alpha_s, m.beta_s_per_byte};
  PassTime t;
  t.latency_s = m.latency_per_step ? m.alpha_s * load.network_steps + node.alpha_s * load.node_steps
                                   : m.alpha_s * static_cast<double>(load.messages);
  t.transfer_s = kBytesPerWord * (m.beta_s_per_byte * static_cast<double>(load.network_words) +
                                  node.beta_s_per_byte * static_cast<double>(load.node_words));
  t.compute_s = flops / m.flop_rate;
  t.total_s =
      t.latency_s + (m.overlap ? std::max(t.transfer_s, t.compute_s) : t.transfer_s + t.compute_s);
  return t;
}

PassTime pass_time_parts(const MachineProfile& m, const PassVolume& v, double flops) {
  return pass_time_parts(m, CommLoad::of(v), flops);
}

double pass_time(const MachineProfile& m, const CommLoad& load, double flops) {
  return pass_time_parts(m, load, flops).total_s;
}

double pass_time(const MachineProfile& m, const PassVolume& v, double flops) {
  return pass_time_parts(m, v, flops).total_s;
}

double pass_time_in_sequence(const MachineProfile& m, const CommLoad& load, double flops) {
  const PassTime t = pass_time_parts(m, load, flops);
  return t.latency_s + (t.transfer_s + t.compute_s);  // as pass_time_parts sums without overlap
}

double local_flops(const LayerLayout& layout, GridCoord g) { return layout.local_shape(g).flops(); }

}  // namespace convgrid
