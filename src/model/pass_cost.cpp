// Seconds from words, messages and flops.
#include "model/pass_cost.hpp"

#include <algorithm>

namespace convgrid {

PassTime pass_time_parts(const MachineProfile& m, const PassVolume& v, double flops) {
  constexpr double kBytesPerWord = sizeof(float);
  PassTime t;
  t.latency_s = m.alpha_s * static_cast<double>(m.latency_per_step ? v.latency_steps : v.messages);
  t.transfer_s = m.beta_s_per_byte * kBytesPerWord * static_cast<double>(v.words());
  t.compute_s = flops / m.flop_rate;
  t.total_s =
      t.latency_s + (m.overlap ? std::max(t.transfer_s, t.compute_s) : t.transfer_s + t.compute_s);
  return t;
}

double pass_time(const MachineProfile& m, const PassVolume& v, double flops) {
  return pass_time_parts(m, v, flops).total_s;
}

double local_flops(const LayerLayout& layout, GridCoord g) { return layout.local_shape(g).flops(); }

}  // namespace convgrid
