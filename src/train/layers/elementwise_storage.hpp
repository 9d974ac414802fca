// What every element-wise training layer (ReLU's family, the smooth activations) holds: its output
// in place, in its input's storage, when it may run so, or else an output and a gradient of its
// own of the input's size; bind() points them at the arena. Nothing moves.
#pragma once

#include "train/train_layer.hpp"

namespace convgrid {

class ElementwiseStorage : public TrainLayer {
 public:
  ActivationData bind(const Communicator&, ActivationData input, ActivationData) override {
    in_ = input;
    if (in_place()) return input;
    out_ = {take_floats(out_buf_), take_floats(dout_buf_)};
    return out_;
  }

 protected:
  ElementwiseStorage(const LayerSetup& s, bool in_place) : TrainLayer(s) {
    set_output(*s.input, in_place);
    size_ = s.input->slice.size();
    if (!this->in_place()) {
      out_buf_ = describe_activation("out", Life::output_values, size_);
      dout_buf_ = describe_activation("dout", Life::output_grad, size_);
    }
  }

  int64_t size_ = 0;
  ActivationData in_, out_;  // out_ is unused in place

 private:
  size_t out_buf_ = 0, dout_buf_ = 0;
};

}  // namespace convgrid
