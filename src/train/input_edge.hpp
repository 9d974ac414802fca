// An input a layer reads in a spread of its own (a convolution's In, a pooling window's region, a
// residual add's shortcut, a concat's operand): delivered from its producer's spread by one all-to-all (a
// BoxExchange over all ranks, model/redistribution.hpp), or read where it lies when this rank
// wants exactly what it holds and nothing moves anywhere. Backward, the layer's gradient of the
// input goes back the same way and is added into the producer's gradient; it is written straight
// into the producer's storage only when the input is read in place and no other layer reads it.
#pragma once

#include <functional>
#include <memory>

#include "train/box_exchange.hpp"
#include "train/train_layer.hpp"

namespace convgrid {

class InputEdge {
 public:
  InputEdge() = default;
  // Describes the edge's buffers on `owner` (constructors of layers only), for setup's rank;
  // `sole_reader`: no other layer reads the producer's output; `all`: what every rank wants
  // (exchange_figures); `data_life`: how long the owner reads the
  // delivered copy (Life::forward or Life::forward_to_backward).
  InputEdge(TrainLayer& owner, const std::string& role, const ActivationSpread& from,
            Box4 wanted_tensor, std::function<Slice(int64_t)> wanted, const LayerSetup& setup,
            bool sole_reader, const WantedByAll& all, Life data_life);

  const ExchangeFigures& figures() const { return figures_; }
  int64_t wanted_size() const { return wanted_size_; }
  // data() is the producer's storage itself (nothing moves, no copy).
  bool reads_in_place() const { return figures_.identity; }
  // forward: the words this rank receives; backward: those of the gradient.
  LayerWords modelled_words() const;

  // Builds the exchange and points data()/grad() at the wanted storage.
  void bind(TrainLayer& owner, const Communicator& world, ActivationData from);
  float* data() const { return data_; }
  float* grad() const { return grad_; }

  void forward(TrafficCounter& traffic);
  // Adds grad() into the producer's gradient (nothing to do when it is that storage).
  void backward(TrafficCounter& traffic);

 private:
  std::shared_ptr<const Placement> from_placement_;
  Box4 wanted_tensor_;
  std::function<Slice(int64_t)> wanted_;
  ExchangeFigures figures_;
  int64_t wanted_size_ = 0;
  bool sole_reader_ = true;
  size_t data_buf_ = 0, grad_buf_ = 0;
  std::unique_ptr<BoxExchange> exchange_;
  ActivationData from_;
  float* data_ = nullptr;
  float* grad_ = nullptr;
};

}  // namespace convgrid
