// The reproducible data-parallel convolution (see reproducible_conv.hpp for what moves).
#include "algo/reproducible_conv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <span>

#include "comm/collectives.hpp"
#include "comm/volume.hpp"
#include "convgrid/error.hpp"
#include "kernel/fixed_order_fc.hpp"
#include "layout/fibre_slices.hpp"

namespace convgrid {
namespace {

// n doubles of `v`, grown when needed; counted by the memory tracker like every Buffer.
double* doubles(TrackedVector<double>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

}  // namespace

ReproducibleConv::ReproducibleConv(const ConvShape& shape, const ProcessGrid& grid, Backend backend)
    : grid_(grid), layout_(shape, grid.dims()), whole_(shape) {
  const GridDims& d = grid.dims();
  if (d.Pk != 1 || d.Pc != 1 || d.Ph != 1 || d.Pw != 1) {
    throw InputError(fmt::format(
        "reproducible arithmetic splits samples only; grid {} splits more "
        "(layer {}){}",
        d.to_string(), shape.to_string(),
        shape.N < d.size() ? fmt::format(": a batch of {} cannot give each of {} ranks a sample",
                                         shape.N, d.size())
                           : ""));
  }
  const GridCoord g = grid.coord();
  samples_ = layout_.in_slice(g).box.extent(0);
  in_sample_ = shape.C * shape.H * shape.W;
  out_sample_ = shape.K * shape.Ho() * shape.Wo();
  if (!fully_connected(whole_)) {
    ConvShape one = shape;
    one.N = 1;
    local_ = std::make_unique<LocalConv>(one, /*with_bias=*/false, backend);
  }
  const FibreSlices f(layout_, g);
  ker_counts_ = f.ker_size;
  for (const Slice& k : f.ker) ker_displs_.push_back(k.flat.begin);
  ker_total_ = std::accumulate(ker_counts_.begin(), ker_counts_.end(), int64_t{0});
}

bool fully_connected(const ConvShape& s) {
  return s.groups == 1 && s.H == 1 && s.W == 1 && s.R == 1 && s.S == 1 && s.Ho() == 1 && s.Wo() == 1;
}

int64_t ReproducibleConv::modelled_words(Pass p) const {
  const int q = grid_.nhw_fibre().size();
  const int64_t me = grid_.dims().nhw_index(grid_.coord());
  switch (p) {
    case Pass::forward:
      return ker_total_ - ker_counts_[me];
    case Pass::backward_data:
      return 0;
    case Pass::backward_weights:
      return 2 * reduce_scatter_words(q, ker_counts_[me]);
  }
  return 0;
}

void ReproducibleConv::forward(const float* in, const float* ker, float* out,
                               TrafficCounter& traffic) {
  ker_local_ = ker;
  if (grid_.dims().nhw_size() > 1) {
    const int64_t me = grid_.dims().nhw_index(grid_.coord());
    if (ker_block_.size() < ker_total_) ker_block_ = Buffer(ker_total_);
    all_gather_v(grid_.nhw_fibre(), std::span<const float>(ker, ker_counts_[me]),
                 std::span<float>(ker_block_.data(), ker_total_), ker_counts_, ker_displs_,
                 traffic);
    ker_local_ = ker_block_.data();
  }
  if (fully_connected(whole_)) {
    fixed_order_fc_forward(samples_, whole_.C, whole_.K, in, ker_local_, out);
    return;
  }
  for (int64_t n = 0; n < samples_; ++n) {
    local_->forward(in + n * in_sample_, ker_local_, nullptr, out + n * out_sample_);
  }
}

void ReproducibleConv::backward_data(const float* dout, float* din) {
  if (ker_local_ == nullptr) throw Error("reproducible conv: backward_data before forward");
  if (fully_connected(whole_)) {
    fixed_order_fc_backward_data(samples_, whole_.C, whole_.K, dout, ker_local_, din);
    return;
  }
  for (int64_t n = 0; n < samples_; ++n) {
    local_->backward_data(dout + n * out_sample_, ker_local_, din + n * in_sample_);
  }
}

void ReproducibleConv::backward_weights(const float* dout, const float* in, float* dker,
                                        TrafficCounter& traffic) {
  const int64_t total = ker_total_;
  double* sum = doubles(dker_sum_, total);
  std::fill(sum, sum + total, 0.0);
  if (fully_connected(whole_)) {
    fixed_order_fc_backward_weights_add(samples_, whole_.C, whole_.K, dout, in, sum);
  } else {
    if (sample_dker_.size() < total) sample_dker_ = Buffer(total);
    const float* one = sample_dker_.data();
    for (int64_t n = 0; n < samples_; ++n) {
      local_->backward_weights(dout + n * out_sample_, in + n * in_sample_, sample_dker_.data(),
                               nullptr);
      for (int64_t i = 0; i < total; ++i) sum[i] += one[i];
    }
  }
  if (grid_.dims().nhw_size() == 1) {  // the sum is the finished gradient: no reduction
    for (int64_t i = 0; i < total; ++i) dker[i] = static_cast<float>(sum[i]);
    return;
  }
  const int64_t me = grid_.dims().nhw_index(grid_.coord());
  double* mine = doubles(dker_mine_, std::max<int64_t>(ker_counts_[me], 1));
  reduce_scatter(grid_.nhw_fibre(), std::span<const double>(sum, total),
                 std::span<double>(mine, ker_counts_[me]), ker_counts_, traffic);
  for (int64_t i = 0; i < ker_counts_[me]; ++i) dker[i] = static_cast<float>(mine[i]);
}

}  // namespace convgrid
