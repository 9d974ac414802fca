// One RankState per rank: a process global under Open MPI, SMPI's per-rank user data under SMPI.
#include "sim/rank_state.hpp"

#ifdef CONVGRID_SMPI
#include <smpi/smpi.h>
#endif

namespace convgrid::sim {

#ifdef CONVGRID_SMPI
RankState& rank_state() {
  auto* state = static_cast<RankState*>(smpi_process_get_user_data());
  if (state == nullptr) {
    // Lives until the simulation ends: SMPI offers no hook at a rank's end, and a rank's
    // buffers may be released after MPI_Finalize.
    state = new RankState;
    smpi_process_set_user_data(state);
  }
  return *state;
}
#else
RankState& rank_state() {
  static RankState state;
  return state;
}
#endif

}  // namespace convgrid::sim
