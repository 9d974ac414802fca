// The small networks of the DistNet and training memory tests: every layer kind (conv with bias,
// ReLU6, ReLU, overlapping padded max pooling, average pooling, flatten, fully connected, softmax
// cross-entropy; batch norm, residual adds, add layers, pooling in ceil_mode, concats, the
// smooth activations and squeeze-and-excitation in networks of their own), with plans on given grids and a list of grid choices that covers every
// grid of each layer.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "convgrid/grid_dims.hpp"
#include "nn/network.hpp"
#include "plan/layer_planner.hpp"

namespace convgrid::test_net {

constexpr int64_t kBatch = 6;

inline Layer conv(const char* name, int64_t K, int64_t R, int64_t stride, int64_t pad) {
  Layer l(LayerKind::conv, name);
  l.conv.K = K;
  l.conv.R = l.conv.S = R;
  l.conv.stride_h = l.conv.stride_w = stride;
  l.conv.pad_top = l.conv.pad_left = l.conv.pad_bottom = l.conv.pad_right = pad;
  l.conv.bias = true;
  return l;
}

inline Layer pool(LayerKind kind, const char* name, int64_t window, int64_t stride, int64_t pad) {
  Layer l(kind, name);
  l.pool = {window, window, stride, stride, pad, pad};
  return l;
}

// The networks' last layers: flatten, a fully connected layer of 5 classes with bias, the loss.
inline void add_classifier(Network& net) {
  net.add(Layer(LayerKind::flatten, "flat"));
  Layer fc(LayerKind::fully_connected, "fc");
  fc.conv.K = 5;
  fc.conv.bias = true;
  net.add(fc);
  net.add(Layer(LayerKind::softmax_xent, "loss"));
}

inline Network small_net() {
  Network net("small", {2, 9, 9});
  net.add(conv("c1", 4, 3, 1, 1));
  net.add(Layer(LayerKind::relu6, "r1"));
  net.add(pool(LayerKind::max_pool, "p1", 3, 2, 1));  // 5x5, windows overlap
  net.add(conv("c2", 6, 3, 1, 1));
  net.add(Layer(LayerKind::relu, "r2"));
  net.add(pool(LayerKind::avg_pool, "p2", 2, 2, 0));  // 2x2
  add_classifier(net);
  return net;
}

// A residual network with batch normalization: conv-bn-relu, a block with an identity shortcut
// whose first convolution is depthwise, a block with a strided projection shortcut whose second
// convolution is grouped (3 groups of 2 channels), global average pooling, fc and the loss.
inline Network residual_net() {
  Network net("residual", {3, 8, 8});
  const auto conv_bn = [&](const char* conv_name, const char* bn, int64_t K, int64_t R, int64_t stride,
                           const char* input = "", int64_t groups = 1) {
    Layer c = conv(conv_name, K, R, stride, R / 2);
    c.conv.bias = false;
    c.conv.groups = groups;
    c.input = input;
    net.add(c);
    net.add(Layer(LayerKind::batch_norm, bn));
  };
  conv_bn("c1", "bn1", 4, 3, 1);
  net.add(Layer(LayerKind::relu, "r1"));
  conv_bn("c2", "bn2", 4, 3, 1, "", 4);
  net.add(Layer(LayerKind::relu, "r2"));
  conv_bn("c3", "bn3", 4, 3, 1);
  Layer r3(LayerKind::relu, "r3");
  r3.residual = "r1";  // identity shortcut
  net.add(r3);
  conv_bn("proj", "proj_bn", 6, 1, 2, "r3");
  conv_bn("c4", "bn4", 6, 3, 2, "r3");
  net.add(Layer(LayerKind::relu, "r4"));
  conv_bn("c5", "bn5", 6, 3, 1, "", 3);
  Layer r5(LayerKind::relu, "r5");
  r5.residual = "proj_bn";  // projection shortcut
  net.add(r5);
  net.add(Layer(LayerKind::global_avg_pool, "gap"));
  add_classifier(net);
  return net;
}

// Pooling in PyTorch's ceil_mode, whose last windows run past the input's end: max pooling with
// windows that tile the image but for the last row and column (7 -> 4, the last window one row
// of input), then average pooling with padding whose last window covers a row, the padding and
// a row past it (4 -> 3; the floor gives 2), dividing by the 2 rows of the padded input.
inline Network ceil_net() {
  Network net("ceil", {2, 9, 9});
  const auto ceil = [](Layer l) {
    l.pool.ceil_mode = true;
    return l;
  };
  net.add(conv("c1", 4, 3, 1, 0));  // 7x7
  net.add(Layer(LayerKind::relu, "r1"));
  net.add(ceil(pool(LayerKind::max_pool, "p1", 2, 2, 0)));  // 4x4
  net.add(conv("c2", 6, 3, 1, 1));
  net.add(ceil(pool(LayerKind::avg_pool, "p2", 3, 2, 1)));  // 3x3
  add_classifier(net);
  return net;
}

inline Layer concat(const char* name, const char* input, std::vector<std::string> operands) {
  Layer l(LayerKind::concat, name);
  l.input = input;
  l.concat_inputs = std::move(operands);
  return l;
}

// Concats (Inception, DenseNet): an inception block (a 1x1 conv; 1x1 then 3x3; 3x3 max pooling of
// stride 1 then 1x1; joined, batch norm, relu), a dense block (the block's input joined with a new
// 3x3 conv's output, batch norm, relu, and that join joined again with a second conv's output),
// average pooling after the last join, and a concat that joins the pooled activation with itself
// (its gradient is the sum of both halves'), flattened into the classifier. Every join lies on the
// grid of the inception block's 1x1 conv `b1` (the first operand of the first join).
inline Network concat_net() {
  Network net("concat", {3, 6, 6});
  const auto conv_from = [&](const char* name, const char* input, int64_t K, int64_t R) {
    Layer c = conv(name, K, R, 1, R / 2);
    c.input = input;
    net.add(c);
  };
  net.add(conv("stem", 4, 3, 1, 1));
  net.add(Layer(LayerKind::relu, "stem_r"));
  conv_from("b1", "stem_r", 4, 1);
  conv_from("b2a", "stem_r", 2, 1);
  conv_from("b2", "", 3, 3);
  Layer b3p = pool(LayerKind::max_pool, "b3p", 3, 1, 1);
  b3p.input = "stem_r";
  net.add(b3p);
  conv_from("b3", "", 2, 1);
  net.add(concat("cat1", "b1", {"b2", "b3"}));  // 9 channels
  net.add(Layer(LayerKind::batch_norm, "bn1"));
  net.add(Layer(LayerKind::relu, "r1"));
  conv_from("d1", "", 2, 3);
  net.add(concat("cat2", "r1", {"d1"}));  // 11
  net.add(Layer(LayerKind::batch_norm, "bn2"));
  net.add(Layer(LayerKind::relu, "r2"));
  conv_from("d2", "", 3, 3);
  net.add(concat("cat3", "cat2", {"d2"}));  // 14
  net.add(pool(LayerKind::avg_pool, "p3", 2, 2, 0));  // 3x3
  net.add(concat("cat4", "p3", {"p3"}));  // 28
  add_classifier(net);
  return net;
}

inline std::vector<LayerPlan> plans_on(const Network& net, const std::vector<GridDims>& grids,
                                       int64_t batch = kBatch) {
  std::vector<LayerPlan> plans;
  PlanOptions o;
  o.procs = grids.front().size();
  size_t i = 0;
  for (const ComputeLayer& c : net.compute_layers()) {
    plans.push_back(evaluate_grid(conv_shape(net.layers()[c.layer], batch), grids[i++], o));
  }
  return plans;
}

inline std::vector<std::vector<GridDims>> grid_choices(const Network& net, int64_t P) {
  std::vector<std::vector<GridDims>> fitting;
  for (const ComputeLayer& c : net.compute_layers()) {
    const ConvShape s = conv_shape(net.layers()[c.layer], kBatch);
    fitting.emplace_back();
    for (const GridDims& g : all_grids(P)) {
      if (g.fits(s)) fitting.back().push_back(g);
    }
  }
  std::vector<std::vector<GridDims>> out;
  size_t most = 0;
  for (const auto& f : fitting) most = std::max(most, f.size());
  for (size_t i = 0; i < most; ++i) {  // grid i of each layer, and shifted by one and by two
    for (size_t shift : {size_t{0}, size_t{1}}) {
      std::vector<GridDims> choice;
      for (size_t l = 0; l < fitting.size(); ++l)
        choice.push_back(fitting[l][(i + l * shift) % fitting[l].size()]);
      out.push_back(choice);
    }
  }
  return out;
}

// The grid choices to try of a network: those of grid_choices (at most `most`, spread over the
// list), and first the choice of each layer's fitting grid that splits channels the most (the
// largest Pk * Pc, the first of equals), so that activations in channel blocks, and the joins of
// concats, are tried whatever the spread picks.
inline std::vector<std::vector<GridDims>> some_grid_choices(const Network& net, int64_t P, size_t most) {
  const std::vector<std::vector<GridDims>> all = grid_choices(net, P);
  std::vector<std::vector<GridDims>> out(1);
  for (const ComputeLayer& c : net.compute_layers()) {
    const ConvShape s = conv_shape(net.layers()[c.layer], kBatch);
    std::optional<GridDims> best;
    for (const GridDims& g : all_grids(P)) {
      if (g.fits(s) && (!best || g.Pk * g.Pc > best->Pk * best->Pc)) best = g;
    }
    if (best) out.front().push_back(*best);
  }
  if (out.front().size() != net.compute_layers().size()) out.erase(out.begin());
  const size_t stride = (all.size() + most - 1) / most;
  for (size_t c = 0; c < all.size(); c += stride) out.push_back(all[c]);
  return out;
}

// PyTorch's smooth activations: Hardswish and SiLU, whose backward reads their input (never in
// place), Tanh in place, a sigmoid whose input the next conv also adds as its residual (into
// buffers of its own), Hardsigmoid in place.
inline Network activation_net() {
  Network net("activation", {2, 6, 6});
  net.add(conv("c1", 4, 3, 1, 1));
  net.add(Layer(LayerKind::hardswish, "hardswish"));
  net.add(conv("c2", 4, 3, 1, 1));
  net.add(Layer(LayerKind::silu, "silu"));
  net.add(Layer(LayerKind::tanh, "tanh"));
  net.add(Layer(LayerKind::sigmoid, "sigmoid"));
  Layer c3 = conv("c3", 4, 1, 1, 0);
  c3.residual = "tanh";
  net.add(c3);
  net.add(Layer(LayerKind::hardsigmoid, "hardsigmoid"));
  net.add(pool(LayerKind::avg_pool, "pool", 3, 3, 0));  // 2x2
  add_classifier(net);
  return net;
}

// Squeeze-and-excitation (MobileNet-V3, RegNetY, EfficientNet): c1's activation is pooled whole,
// squeezed by a 1x1 conv to 2 channels and expanded back to 4, and its sigmoid is the gate that
// scales the activation, one value per sample and channel; the scaled activation feeds c2, and
// a second block's gate (Hardsigmoid) scales c2's, whose activation the gate's pooling also reads.
inline Network se_net() {
  Network net("se", {2, 6, 6});
  const auto block = [&](const char* tag, const char* x, LayerKind gate_kind) {
    Layer pool(LayerKind::global_avg_pool, fmt::format("{}_pool", tag));
    pool.input = x;
    net.add(pool);
    net.add(conv(fmt::format("{}_squeeze", tag).c_str(), 2, 1, 1, 0));
    net.add(Layer(LayerKind::relu, fmt::format("{}_relu", tag)));
    net.add(conv(fmt::format("{}_expand", tag).c_str(), 4, 1, 1, 0));
    net.add(Layer(gate_kind, fmt::format("{}_gate", tag)));
    Layer scale(LayerKind::scale, fmt::format("{}_scale", tag));
    scale.input = x;
    scale.gate = fmt::format("{}_gate", tag);
    net.add(scale);
  };
  net.add(conv("c1", 4, 3, 1, 1));
  net.add(Layer(LayerKind::relu, "r1"));
  block("se1", "r1", LayerKind::sigmoid);
  net.add(conv("c2", 4, 3, 1, 1));
  net.add(Layer(LayerKind::hardswish, "a2"));
  block("se2", "a2", LayerKind::hardsigmoid);
  net.add(pool(LayerKind::avg_pool, "pool", 3, 3, 0));  // 2x2
  add_classifier(net);
  return net;
}

// MobileNet-V2's identity blocks, whose sums feed the next block and its shortcut: add layers
// (input + residual) read by a conv and by the next add. The first add's input is also read by
// the conv beside it (its residual add is not in place) and its residual by it alone; the
// second's input is read by it alone (in place) and its residual, the first add, twice.
inline Network add_net() {
  Network net("add", {2, 6, 6});
  const auto add = [&](std::string name, std::string input, std::string residual) {
    Layer l(LayerKind::add, std::move(name));
    l.input = std::move(input);
    l.residual = std::move(residual);
    net.add(l);
  };
  net.add(conv("c1", 4, 3, 1, 1));
  net.add(conv("c2", 4, 3, 1, 1));
  add("s1", "c1", "c2");
  net.add(conv("c3", 4, 1, 1, 0));
  add("s2", "", "s1");
  net.add(pool(LayerKind::avg_pool, "pool", 3, 3, 0));  // 2x2
  add_classifier(net);
  return net;
}

// An activation read both in place and by another layer: r1 is flattened into fc1 (a flatten
// is a view, so its gradient is r1's storage) and read by c2, whose branch is flattened into fc2,
// which adds fc1's output as its residual. fc1, the flatten's only reader, must add its input
// gradient into r1's, not write over what c2 put there.
inline Network shared_flatten_net() {
  Network net("shared_flatten", {2, 6, 6});
  net.add(conv("c1", 4, 3, 1, 1));
  net.add(Layer(LayerKind::relu, "r1"));
  net.add(Layer(LayerKind::flatten, "f1"));
  Layer fc1(LayerKind::fully_connected, "fc1");
  fc1.conv.K = 16;
  net.add(fc1);
  Layer c2 = conv("c2", 4, 3, 1, 1);
  c2.input = "r1";
  net.add(c2);
  net.add(pool(LayerKind::avg_pool, "p2", 3, 3, 0));  // 2x2: 16 features
  net.add(Layer(LayerKind::flatten, "f2"));
  Layer fc2(LayerKind::fully_connected, "fc2");
  fc2.conv.K = 5;
  fc2.conv.bias = true;
  fc2.residual = "fc1";
  net.add(fc2);
  net.add(Layer(LayerKind::softmax_xent, "loss"));
  return net;
}

}  // namespace convgrid::test_net
