// convgrid simulate --shape STR --procs P --sweep-memory: the words each rank receives against the
// memory each rank holds, for every plan of the layer on P ranks (the grid algorithm, "3D", and
// the streamed one, "2D" with Pc = 1 and "2.5D" with Pc > 1, for each panel count), the frontier
// of the best words under each memory, and the memory-dependent and memory-independent lower
// bounds (SPEC sections 5 and 7). CSV and an SVG picture drawn by gnuplot.
#pragma once

#include <string>

#include "plan_flags.hpp"

namespace convgrid::cli {

struct MemorySweepOptions {
  std::string shape;
  int64_t procs = 0;
  PlanFlags flags;
  std::string out;  // default sweep-memory
};

int run_memory_sweep(const MemorySweepOptions& options);

}  // namespace convgrid::cli
