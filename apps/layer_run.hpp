// One convolution layer set up to run on a grid: the grid algorithm (GridConv) or its streamed
// form (StreamedConv, when panels > 0) and this rank's at-rest slices of every tensor (In, Ker,
// dOut read; Out, dIn, dKer written), with timed repeats of its passes.
// Shared by `convgrid conv` and `convgrid bench`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <optional>

#include "algo/grid_conv.hpp"
#include "algo/streamed_conv.hpp"
#include "comm/communicator.hpp"
#include "convgrid/memory.hpp"
#include "io/seeded_tensor.hpp"

namespace convgrid::cli {

// One tensor of the layer: its global box and this rank's at-rest slice.
struct LayerTensor {
  Box4 global;
  Slice slice;
  Buffer data;
};

// What one rank saw of one pass over the timed repeats.
struct PassTiming {
  std::vector<double> seconds;  // each timed repeat: own_seconds' largest over ranks
  double own_seconds = 0;       // the last repeat on this rank: from the common start
                                // (sim::start_together) until its pass returned; its largest
                                // over ranks is the slowest rank's time, as the model takes the
                                // busiest rank's
  PassSeconds split;            // comm / compute of the fastest repeat
  Traffic traffic;              // received in the last repeat
  int64_t peak_bytes = 0;       // largest tracked peak during the pass
};

class LayerRun {
 public:
  // panels > 0: the streamed algorithm; local_work = false: its communication alone.
  LayerRun(const ConvShape& shape, const ProcessGrid& grid, Backend backend, int64_t panels = 0,
           bool local_work = true);

  const LayerLayout& layout() const { return layout_; }
  int64_t panels() const { return panels_; }
  LayerTensor& in() { return in_; }
  LayerTensor& ker() { return ker_; }
  LayerTensor& dout() { return dout_; }
  LayerTensor& out() { return out_; }
  LayerTensor& din() { return din_; }
  LayerTensor& dker() { return dker_; }

  // Fills In, Ker and dOut from the seed.
  void generate(uint64_t seed);
  // One warm-up step (unless warm_up is false: under a simulator nothing warms up), then
  // `repeat` timed steps; each step runs `passes` in order from new_step().
  std::map<Pass, PassTiming> time_steps(const Communicator& comm, const std::vector<Pass>& passes,
                                        int repeat, bool warm_up = true);

 private:
  void run(Pass p, TrafficCounter& traffic);

  LayerLayout layout_;
  int64_t panels_ = 0;
  std::optional<GridConv> grid_conv_;
  std::optional<StreamedConv> streamed_;
  LayerTensor in_, ker_, dout_, out_, din_, dker_;
};

double min_of(const std::vector<double>& v);
double median_of(std::vector<double> v);

}  // namespace convgrid::cli
