// Rank 0's grid, panels and algorithm per layer, as seven integers a layer in one broadcast.
#include "plan/plan_broadcast.hpp"

#include <mpi.h>

#include <algorithm>

namespace convgrid {

void broadcast_plan_choices(const Communicator& world, const std::vector<ConvShape>& shapes,
                            std::vector<LayerPlan>& plans) {
  constexpr size_t kFields = 7;  // Pn, Pk, Pc, Ph, Pw, panels, algorithm
  std::vector<int64_t> flat(shapes.size() * kFields);
  if (world.rank() == 0) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      const LayerPlan& p = plans[i];
      const int64_t v[kFields] = {p.grid.Pn, p.grid.Pk, p.grid.Pc, p.grid.Ph,
                                  p.grid.Pw, p.panels,  static_cast<int64_t>(p.algorithm)};
      std::copy(v, v + kFields, flat.begin() + static_cast<std::ptrdiff_t>(kFields * i));
    }
  }
  MPI_Bcast(flat.data(), static_cast<int>(flat.size()), MPI_INT64_T, 0, world.raw());
  if (world.rank() == 0) return;
  plans.assign(shapes.size(), LayerPlan{});
  for (size_t i = 0; i < shapes.size(); ++i) {
    const int64_t* v = flat.data() + kFields * i;
    LayerPlan& p = plans[i];
    p.shape = shapes[i];
    p.grid = GridDims{v[0], v[1], v[2], v[3], v[4]};
    p.panels = v[5];
    p.algorithm = static_cast<ConvAlgorithm>(v[6]);
  }
}

}  // namespace convgrid
