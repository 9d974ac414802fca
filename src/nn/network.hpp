// A network: a sequence of layers (SPEC section 8) with the activation shape flowing through it.
//
// The sequence is a linearisation of the network's graph. A layer reads the output of the layer
// before it unless `input` names an earlier one (a ResNet projection shortcut reads its block's
// input), and a `residual` layer's output is added to the layer's input first (the ResNet
// shortcut add: an element-wise sum of two tensors in the same distribution, not a layer that
// moves data). An `add` layer is that sum alone, the identity on its input plus its residual:
// the sum as a layer of its own, for when more than one layer reads it (MobileNet-V2's blocks,
// which have no activation after the add). A `concat` layer joins its input and the layers its
// `concat_inputs` name along channels, in that order (DenseNet, Inception): the operands have the
// same H x W, and the output has the sum of their channels. Network::add infers and checks every shape as it goes,
// so a Network is always consistent; any mismatch is an InputError naming the layer and the
// numbers.
//
// Shapes are per sample; the batch N is given when a convolution is instantiated (conv_shape).
// Pooling: out = floor((H + 2*pad - window) / stride) + 1 with ceil_mode=false, pad <= window/2;
// with ceil_mode (PyTorch's) out = ceil((H + 2*pad - window) / stride) + 1, less one when the
// last window would start in the bottom/right padding (at or past H + pad of the padded input).
// That window may run past the padded input's end: max pooling takes the input elements it
// covers (padding is -inf), average pooling divides by the window clipped to the padded input,
// padding counting as 0 (PyTorch's count_include_pad=True); without ceil_mode every window is
// whole.
// A fully connected layer of K outputs on F = C features is the convolution N,C=F,H=W=1,K,R=S=1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "convgrid/conv_shape.hpp"

namespace convgrid {

// One sample's activation, C x H x W.
struct Activation {
  int64_t C = 1, H = 1, W = 1;

  std::string to_string() const;  // "CxHxW"
  bool operator==(const Activation&) const = default;
};

enum class LayerKind {
  conv,
  relu,
  relu6,  // min(max(x, 0), 6): PyTorch's ReLU6 (MobileNet-V2)
  // Smooth activations, as PyTorch defines them: 1 / (1 + e^-x); tanh x; relu6(x + 3) / 6;
  // x relu6(x + 3) / 6; x / (1 + e^-x).
  sigmoid,
  tanh,
  hardsigmoid,
  hardswish,
  silu,
  add,    // the identity on an input that gets its (required) residual added: input + residual
  scale,  // its input times its gate's C x 1 x 1 output, per sample and channel (squeeze-and-excitation)
  concat,  // its input and its concat_inputs joined along channels, in that order
  max_pool,
  avg_pool,
  global_avg_pool,  // average over all rows and columns: an avg_pool whose window is the input
  batch_norm,       // per-channel batch normalization with a scale and a shift (BatchNorm2d)
  flatten,
  fully_connected,
  softmax_xent
};

// The name of a kind as the JSON format spells it: conv, relu, relu6, sigmoid, tanh, hardsigmoid,
// hardswish, silu, add, scale, concat, max_pool, avg_pool, global_avg_pool, batch_norm, flatten,
// fc, softmax_xent.
std::string_view to_string(LayerKind kind);

// conv and fully_connected: the layers the grid algorithm runs.
bool is_compute(LayerKind kind);
// max_pool, avg_pool and global_avg_pool.
bool is_pool(LayerKind kind);

// The geometry of a convolution without its input (C, H, W come from the incoming activation):
// K outputs, an R x S filter, stride, padding (top/left, bottom/right) and dilation, as in
// ConvShape. A fully connected layer uses only K and bias and leaves the rest at the defaults.
struct ConvParams {
  int64_t K = 1, R = 1, S = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int64_t dil_h = 1, dil_w = 1;
  int64_t groups = 1;  // ConvShape::groups
  bool bias = false;

  bool operator==(const ConvParams&) const = default;
};

// A pooling window, its stride and its (symmetric) padding, each h x w, and how the output
// extent rounds (the formula at the top of this file).
struct PoolParams {
  int64_t window_h = 1, window_w = 1;
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  bool ceil_mode = false;

  // The output rows of H input rows and the output columns of W input columns (the parameters
  // unchecked: Network::add checks them).
  int64_t out_h(int64_t H) const;
  int64_t out_w(int64_t W) const;

  bool operator==(const PoolParams&) const = default;
};

struct Layer {
  Layer() = default;
  Layer(LayerKind kind, std::string name) : name(std::move(name)), kind(kind) {}

  std::string name;  // unique in the network; Network::add names an unnamed layer <kind><index>
  LayerKind kind = LayerKind::relu;
  ConvParams conv;       // conv and fully_connected only
  PoolParams pool;       // max_pool, avg_pool and global_avg_pool (set by Network::add) only
  std::string input;     // the earlier layer whose output this one reads; "" = the one before
  std::string residual;  // the earlier layer whose output is added to the input; "" = none
  // concat only: the earlier layers whose outputs follow the input's channels, in order (at
  // least one; a name may repeat, as in ONNX)
  std::vector<std::string> concat_inputs;
  // scale only: the earlier layer whose C x 1 x 1 output multiplies the input, broadcast over its
  // rows and columns (a squeeze-and-excitation block's gate)
  std::string gate;
  Activation in, out;    // set by Network::add

  bool operator==(const Layer&) const = default;
};

// A convolution or fully connected layer, with where its input comes from.
struct ComputeLayer {
  size_t layer = 0;  // index in Network::layers()
  // The compute layer whose output reaches this one's input through relu, pooling and flatten
  // layers (following `input`, not `residual`); none when that is the network's input.
  std::optional<size_t> source;
  // Whether a pooling or flatten layer lies on that path (the activation changes shape).
  bool through_pool_or_flatten = false;

  bool operator==(const ComputeLayer&) const = default;
};

// Where an activation a layer reads comes from.
//
// Through a concat the trace follows the concat's first operand (its `input`): a concat's output
// lies in the blocks of the grid that wrote that operand, joined over all its channels
// (Placement::joined_of), so that grid's compute layer is the source, `joined` is set and
// `pooled` has the concat's channels.
struct ActivationSource {
  // The compute layer whose output reaches it through relu, pooling, flatten and concat layers
  // (a concat's first operand); none when that is the network's input.
  std::optional<size_t> layer;
  bool through_pool_or_flatten = false;  // or a concat: the activation changes shape
  // The activation as it leaves the last pooling layer (or concat) on the way: before any flatten.
  Activation pooled;
  // A concat lies on the way: the activation is held in its joined placement (pooled after).
  bool joined = false;

  bool operator==(const ActivationSource&) const = default;
};

class Network {
 public:
  // Throws InputError when an input extent is not in [1, 2^40].
  Network(std::string name, Activation input);

  // Appends a layer: resolves its input, checks it, fills in its name (if empty), in and out.
  // Throws InputError naming the network, the layer's index and name, and the mismatch.
  const Layer& add(Layer layer);

  const std::string& name() const { return name_; }
  const Activation& input() const { return input_; }
  const std::vector<Layer>& layers() const { return layers_; }
  // The last layer's output (the input when there are no layers).
  const Activation& output() const;
  // The index of the layer called `name`; none when there is no such layer.
  std::optional<size_t> find(std::string_view name) const;
  // The conv and fully connected layers, in order.
  std::vector<ComputeLayer> compute_layers() const;
  // Where the input of layers()[index] comes from, and where its residual (shortcut) comes from
  // (Error when it has none).
  ActivationSource input_source(size_t index) const;
  // The index of the layer whose output layers()[index] reads (none: the network input).
  std::optional<size_t> producer(size_t index) const;
  ActivationSource residual_source(size_t index) const;
  // Where operand `operand` of concat layer layers()[index] comes from (0: its input, then its
  // concat_inputs in order); Error for another kind or an operand out of range.
  ActivationSource concat_source(size_t index, size_t operand) const;
  // The channels of each operand of concat layer layers()[index] in its output, in order (its
  // input's, then each concat input's); Error for another kind.
  std::vector<int64_t> concat_channels(size_t index) const;
  // Where the gate of scale layer layers()[index] comes from; Error for another kind.
  ActivationSource gate_source(size_t index) const;
  // The layers whose output layers()[index] reads: its producer (none: the network input), its
  // residual, its concat inputs and its gate, in that order.
  std::vector<std::optional<size_t>> operands(size_t index) const;

  bool operator==(const Network&) const = default;

 private:
  // Walks back from layer `from` (none: the network input) to a compute layer.
  ActivationSource trace(std::optional<size_t> from) const;

  std::string name_;
  Activation input_;
  std::vector<Layer> layers_;
};

// The convolution a conv or fully connected layer computes at batch N. Throws InputError for a
// batch out of range and Error for a layer of another kind.
ConvShape conv_shape(const Layer& layer, int64_t batch);


}  // namespace convgrid
