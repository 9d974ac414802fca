// Modelled time of one pass on one rank (SPEC section 6): the words and messages of a
// PassVolume and the flops of the local kernel, turned into seconds by a machine profile.
// Pure; no MPI.
//
//   latency  = alpha * messages     (profile "latency": "per_message")
//            = alpha * rounds       ("per_step": model/collective_rounds.hpp)
//   transfer = beta * 4 * words            (float32 words received)
// With a node level (profile "node") the rounds and words over links inside a node
// (model/node_links.hpp) take the node's alpha and beta instead:
//   latency  = alpha * network rounds + node alpha * node rounds      ("per_step")
//   transfer = 4 * (beta * network words + node beta * node words)
//   compute  = flops / flop_rate
//   total    = latency + transfer + compute              (profile without overlap)
//            = latency + max(transfer, compute)          (profile with overlap)
//
// With overlap only the bytes hide behind the kernel: the per-message cost is the rank's own
// time (MPI or NCCL calls, synchronisation, kernel launches) and is not overlapped. The max is
// the limit of perfect pipelining, which the streamed algorithms approach panel by panel. The
// grid algorithm's gathers, kernel and reduce-scatter wait on each other, so the planner charges
// its passes without overlap whatever the profile says (plan/layer_planner.cpp).
#pragma once

#include "layout/layer_layout.hpp"
#include "model/grid_volume.hpp"
#include "model/machine_profile.hpp"

namespace convgrid {

struct PassTime {
  double latency_s = 0;
  double transfer_s = 0;
  double compute_s = 0;
  double total_s = 0;
};

PassTime pass_time_parts(const MachineProfile& m, const CommLoad& load, double flops);
PassTime pass_time_parts(const MachineProfile& m, const PassVolume& v, double flops);
double pass_time(const MachineProfile& m, const CommLoad& load, double flops);
double pass_time(const MachineProfile& m, const PassVolume& v, double flops);
// latency + transfer + compute whatever the profile says of overlap: a pass whose gathers,
// kernel and reduce-scatter wait on each other (the grid algorithm's).
double pass_time_in_sequence(const MachineProfile& m, const CommLoad& load, double flops);

// Flops of rank g's local kernel in any of the three passes: 2 * the multiply-adds of its local
// convolution (LayerLayout::local_shape, padding taps included, as the kernel computes them).
double local_flops(const LayerLayout& layout, GridCoord g);

}  // namespace convgrid
