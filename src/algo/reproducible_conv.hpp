// The reproducible data-parallel convolution (`convgrid train --reproducible`): results with the
// same bits on any number of ranks. Samples are split over the ranks (grid P,1,1,1,1); each
// sample's passes run on their own (oneDNN with one sample per call, or the fixed-order fully
// connected kernels of kernel/fixed_order_fc.hpp), so a sample's results do not depend on which
// other samples share its rank; the one sum over samples, the weight gradient, is formed in
// double and reduced in double, whose rounding lies far below float's (the float result is then
// the same unless a double sum falls within 2^-53 of a float rounding boundary).
//
//   Ker[k,c | whole]         := all-gather over the n-fibre (forward; backward-data reuses it)
//   Out[n,k,h,w | own n]     := each own sample's local forward
//   dIn[n,c,h,w | own n]     := each own sample's local backward-data
//   dKer~[k,c | whole]       := sum in double, sample after sample, of the own samples' dKer
//   dKer[k,c | slice]        := reduce-scatter (double) of dKer~ over the n-fibre, then float
//
// Words: the all-gather's (what the grid algorithm moves on this grid) and twice the grid
// algorithm's reduce-scatter (a double is two words): modelled_words().
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "comm/traffic.hpp"
#include "convgrid/local_conv.hpp"
#include "convgrid/memory.hpp"
#include "grid/process_grid.hpp"
#include "layout/layer_layout.hpp"

namespace convgrid {

// A 1x1 image under a 1x1 kernel: a fully connected layer, which ReproducibleConv runs as one
// matrix product over the rank's samples instead of one convolution per sample.
bool fully_connected(const ConvShape& s);

class ReproducibleConv {
 public:
  // Throws InputError unless the grid splits samples only.
  ReproducibleConv(const ConvShape& shape, const ProcessGrid& grid,
                   Backend backend = Backend::onednn);

  const LayerLayout& layout() const { return layout_; }
  // The words this rank receives in pass p (as TrafficCounter counts them).
  int64_t modelled_words(Pass p) const;

  void forward(const float* in, const float* ker, float* out, TrafficCounter& traffic);
  // Reads the weights forward gathered in this step.
  void backward_data(const float* dout, float* din);
  void backward_weights(const float* dout, const float* in, float* dker, TrafficCounter& traffic);

 private:
  const ProcessGrid& grid_;
  LayerLayout layout_;
  ConvShape whole_;
  int64_t samples_ = 0;                     // this rank's
  int64_t in_sample_ = 0, out_sample_ = 0;  // floats of one sample
  std::unique_ptr<LocalConv> local_;        // one sample per call (convolutions)
  std::vector<int64_t> ker_counts_, ker_displs_;
  int64_t ker_total_ = 0;                                  // the whole Ker
  Buffer ker_block_, sample_dker_;
  TrackedVector<double> dker_sum_, dker_mine_;
  const float* ker_local_ = nullptr;
};

}  // namespace convgrid
