// Batch normalization in training (train/batch_norm_kernel.hpp, PyTorch's BatchNorm2d): per
// channel, the mean and variance over every sample and pixel of the batch, where the input lies.
// A channel's elements may be spread over several ranks (split samples, rows or columns); the
// ranks whose slices cover the same channels form the layer's channel group, and
//
//   sum, sum of squares [c | my channels]  := all-reduce over the channel group (double)
//   y                                      := gamma * (x - mean) / sqrt(var + eps) + beta
//   backward: sum dy, sum dy*xhat [c]      := all-reduce over the channel group (double)
//             dgamma, dbeta: those sums;   dx from them (bn_input_grad)
//
// Scale and shift (and the running statistics) are sharded by channel group: every rank holds
// its group's channels, the same values on every member, updated identically. Inference
// (step(train = false)) normalises with the running statistics and moves nothing.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "comm/collectives.hpp"
#include "convgrid/error.hpp"
#include "kernel/vector_loops.hpp"
#include "model/batch_norm_volume.hpp"
#include "sim/compute.hpp"
#include "train/batch_norm_kernel.hpp"
#include "train/train_layer.hpp"

namespace convgrid {
namespace {

class BatchNormLayer final : public TrainLayer {
 public:
  explicit BatchNormLayer(const LayerSetup& s)
      : TrainLayer(s),
        sole_reader_(s.sole_reader),
        placement_(s.input != nullptr ? s.input->placement : nullptr),
        procs_(s.procs),
        rank_(s.rank) {
    const Layer& layer = s.layer();
    if (s.input == nullptr) {
      throw InputError(fmt::format("layer '{}' (batch_norm) reads the network input", layer.name));
    }
    set_output(*s.input, false);
    channels_ = s.input->slice.box.r[1];
    H_ = layer.in.H;
    W_ = layer.in.W;
    C_ = layer.in.C;
    const int64_t n = s.input->slice.size(), nc = channels_.size();
    out_buf_ = describe_activation("out", Life::output_values, n);
    dout_buf_ = describe_activation("dout", Life::output_grad, n);
    if (!sole_reader_) din_buf_ = describe_activation("din", Life::backward, n);
    for (const char* role :
         {"weight", "weight grad", "bias", "bias grad", "running_mean", "running_var"}) {
      vec_buf_.push_back(describe(role, MemoryGroup::parameters, nc));
    }
    describe_held("momentum", MemoryGroup::parameters,
                  2 * static_cast<int64_t>(sizeof(float)) * nc);
    sums_buf_ = describe("sums", MemoryGroup::parameters, 2 * nc, sizeof(double));
  }

  LayerWords modelled_words() const override {
    // Found here, not as the layer is built: the memory model builds every rank's layer and
    // never asks for its words, and finding the group takes O(P).
    if (!group_info_) group_info_ = channel_group(*placement_, procs_, rank_);
    const int64_t w = batch_norm_words(*group_info_);
    return {w, w};
  }
  // backward reads x, the input.
  StorageUse storage_use() const override { return {.reads_input_in_backward = true}; }

  ActivationData bind(const Communicator& world, ActivationData input, ActivationData) override {
    // Ranges of different groups are disjoint: a range's first channel names its group.
    group_.emplace(world.split(static_cast<int>(channels_.begin), world.rank()));
    in_ = input;
    out_ = {take_floats(out_buf_), take_floats(dout_buf_)};
    din_ = sole_reader_ ? input.grad : take_floats(din_buf_);
    const int64_t nc = channels_.size();
    for (size_t i = 0; i < vec_buf_.size(); ++i)
      vec_[i] = std::span<float>(take_floats(vec_buf_[i]), nc);
    std::ranges::fill(vec_[kWeight], 1.0f);
    std::ranges::fill(vec_[kBias], 0.0f);
    std::ranges::fill(vec_[kRunningMean], 0.0f);
    std::ranges::fill(vec_[kRunningVar], 1.0f);
    sums_ = std::span<double>(take_doubles(sums_buf_), 2 * nc);
    return out_;
  }

  void forward(StepContext& step) override {
    const Slice& slice = output().slice;
    const int64_t nc = channels_.size();
    if (step.train) {
      std::ranges::fill(sums_, 0.0);
      bn_partial_sums(slice, in_.data, channels_, step.weights, sums_.first(nc), sums_.last(nc));
      all_reduce_sum(*group_, sums_, traffic_);
      stats_ = bn_batch_stats(sums_.first(nc), sums_.last(nc), bn_count(step.weights, H_, W_));
      bn_update_running(stats_, vec_[kRunningMean], vec_[kRunningVar]);
    } else {
      stats_ = bn_running_stats(vec_[kRunningMean], vec_[kRunningVar]);
    }
    bn_normalize(slice, in_.data, channels_, stats_, vec_[kWeight], vec_[kBias], out_.data);
  }

  void backward(StepContext& step) override {
    const Slice& slice = output().slice;
    const int64_t nc = channels_.size();
    std::ranges::fill(sums_, 0.0);
    bn_grad_sums(slice, in_.data, out_.grad, channels_, stats_, step.weights, sums_.first(nc),
                 sums_.last(nc));
    all_reduce_sum(*group_, sums_, traffic_);
    for (int64_t c = 0; c < nc; ++c) {
      vec_[kBiasGrad][c] = static_cast<float>(sums_[c]);
      vec_[kWeightGrad][c] = static_cast<float>(sums_[nc + c]);
    }
    bn_input_grad(slice, in_.data, out_.grad, channels_, stats_, vec_[kWeight], sums_.first(nc),
                  sums_.last(nc), step.weights, din_);
    if (!sole_reader_ && !sim::kernels_skipped()) {
      add_into(in_.grad, din_, slice.size());
    }
  }

  std::vector<ParamShard> params() override {
    return {shard(".weight", kWeight, kWeightGrad), shard(".bias", kBias, kBiasGrad)};
  }
  std::vector<ParamShard> state() override {
    return {shard(".running_mean", kRunningMean, -1), shard(".running_var", kRunningVar, -1)};
  }

 private:
  enum Vec { kWeight, kWeightGrad, kBias, kBiasGrad, kRunningMean, kRunningVar, kVecs };

  ParamShard shard(const char* suffix, int value, int grad) {
    const Box4 global{{Range{0, C_}, Range{0, 1}, Range{0, 1}, Range{0, 1}}};
    const Box4 mine{{channels_, Range{0, 1}, Range{0, 1}, Range{0, 1}}};
    return {name() + suffix, global,      Slice::whole(mine),
            false,           vec_[value], grad < 0 ? std::span<float>() : vec_[grad]};
  }

  bool sole_reader_;
  Range channels_;
  int64_t C_ = 0, H_ = 0, W_ = 0;
  std::shared_ptr<const Placement> placement_;
  int64_t procs_, rank_;
  mutable std::optional<ChannelGroup> group_info_;
  size_t out_buf_ = 0, dout_buf_ = 0, din_buf_ = 0, sums_buf_ = 0;
  std::vector<size_t> vec_buf_;
  std::optional<Communicator> group_;
  ActivationData in_, out_;
  float* din_ = nullptr;
  std::span<float> vec_[kVecs];
  std::span<double> sums_;
  BnStats stats_;
};

}  // namespace

std::unique_ptr<TrainLayer> make_batch_norm_layer(const LayerSetup& setup) {
  return std::make_unique<BatchNormLayer>(setup);
}

}  // namespace convgrid
