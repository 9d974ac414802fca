// Setting up a layer's slices and timing its passes, each from a common start until its slowest
// rank is done.
#include "layer_run.hpp"

#include <mpi.h>

#include <algorithm>

#include "sim/phase_start.hpp"

namespace convgrid::cli {
namespace {

LayerTensor make_tensor(const Box4& global, const Slice& slice) {
  return {global, slice, Buffer(slice.size())};
}

}  // namespace

LayerRun::LayerRun(const ConvShape& s, const ProcessGrid& grid, Backend backend, int64_t panels,
                   bool local_work)
    : layout_(s, grid.dims()), panels_(panels) {
  if (panels > 0) {
    streamed_.emplace(s, grid, StreamOptions{panels, StreamOptions{}.pieces, local_work}, backend);
  } else {
    grid_conv_.emplace(s, grid, backend);
  }
  const LayerLayout& L = layout_;
  const GridCoord g = grid.coord();
  const Box4 in_all = input_box(s), ker_all = weight_box(s), out_all = output_box(s);
  in_ = make_tensor(in_all, L.in_slice(g));
  din_ = make_tensor(in_all, L.in_slice(g));
  ker_ = make_tensor(ker_all, L.ker_slice(g));
  dker_ = make_tensor(ker_all, L.ker_slice(g));
  out_ = make_tensor(out_all, L.out_slice(g));
  dout_ = make_tensor(out_all, L.out_slice(g));
}

void LayerRun::generate(uint64_t seed) {
  fill_seeded(in_.slice, in_.global, seed, TensorStream::input, in_.data.data());
  fill_seeded(ker_.slice, ker_.global, seed, TensorStream::weights, ker_.data.data());
  fill_seeded(dout_.slice, dout_.global, seed, TensorStream::grad_output, dout_.data.data());
}

void LayerRun::run(Pass p, TrafficCounter& traffic) {
  const auto run_on = [&](auto& conv) {
    switch (p) {
      case Pass::forward:
        conv.forward(in_.data.data(), ker_.data.data(), out_.data.data(), traffic);
        break;
      case Pass::backward_data:
        conv.backward_data(dout_.data.data(), ker_.data.data(), din_.data.data(), traffic);
        break;
      case Pass::backward_weights:
        conv.backward_weights(dout_.data.data(), in_.data.data(), dker_.data.data(), traffic);
        break;
    }
  };
  if (streamed_) {
    run_on(*streamed_);
  } else {
    run_on(*grid_conv_);
  }
}

std::map<Pass, PassTiming> LayerRun::time_steps(const Communicator& comm,
                                                const std::vector<Pass>& passes, int repeat, bool warm_up) {
  std::map<Pass, PassTiming> timing;
  for (int rep = warm_up ? 0 : 1; rep <= repeat; ++rep) {
    if (grid_conv_) grid_conv_->new_step();
    for (Pass p : passes) {
      TrafficCounter traffic;
      MemoryTracker::reset_peak();
      const double t0 = sim::start_together(comm);
      run(p, traffic);
      const double own = MPI_Wtime() - t0;
      double t = own;  // the slowest rank's
      MPI_Allreduce(&own, &t, 1, MPI_DOUBLE, MPI_MAX, comm.raw());
      if (rep == 0) continue;  // warm-up: primitives, buffers, first touch
      PassTiming& pt = timing[p];
      if (pt.seconds.empty() || t < min_of(pt.seconds)) {
        pt.split = streamed_ ? streamed_->last_seconds() : grid_conv_->last_seconds();
      }
      pt.seconds.push_back(t);
      pt.own_seconds = own;
      pt.traffic = traffic.traffic();
      pt.peak_bytes = std::max(pt.peak_bytes, MemoryTracker::peak_bytes());
    }
  }
  return timing;
}

double min_of(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace convgrid::cli
