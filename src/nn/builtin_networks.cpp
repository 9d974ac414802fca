// The built-in networks, layer by layer. Layer names follow the Caffe models (conv1,
// res2a_branch2b, res3a_branch1, fc1000; conv1_1, pool1, fc6); a relu is named after the layer
// it follows, and a ResNet block's relu after the shortcut add is res<stage><block>_relu.
#include "nn/builtin_networks.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "convgrid/error.hpp"

namespace convgrid {
namespace {

// A square R x R convolution with the same stride and padding along h and w.
Layer conv(std::string name, int64_t K, int64_t R, int64_t stride, int64_t pad, bool bias) {
  Layer l(LayerKind::conv, std::move(name));
  l.conv.K = K;
  l.conv.R = l.conv.S = R;
  l.conv.stride_h = l.conv.stride_w = stride;
  l.conv.pad_top = l.conv.pad_left = l.conv.pad_bottom = l.conv.pad_right = pad;
  l.conv.bias = bias;
  return l;
}

Layer fc(std::string name, int64_t K) {
  Layer l(LayerKind::fully_connected, std::move(name));
  l.conv.K = K;
  l.conv.bias = true;
  return l;
}

// A square window with the same stride and padding along h and w.
Layer pool(LayerKind kind, std::string name, int64_t window, int64_t stride, int64_t pad) {
  Layer l(kind, std::move(name));
  l.pool = {window, window, stride, stride, pad, pad};
  return l;
}

// A layer followed by its relu.
void add_with_relu(Network& net, Layer layer) {
  const std::string relu = layer.name + "_relu";
  net.add(std::move(layer));
  net.add(Layer(LayerKind::relu, relu));
}

// The head every ImageNet and Fashion-MNIST network here ends with.
void add_classifier_end(Network& net, std::string fc_name, int64_t classes) {
  net.add(fc(std::move(fc_name), classes));
  net.add(Layer(LayerKind::softmax_xent, "loss"));
}

// Bottleneck blocks [3,4,6,3]; block input -> 1x1 -> 3x3 (stride) -> 1x1 (x4 channels), plus the
// input itself (identity) or its 1x1 projection (first block of a stage), then the add and relu.
// The projection is listed right before its block's main path, which reads the block input.
Network resnet50() {
  Network net("resnet50", {3, 224, 224});
  add_with_relu(net, conv("conv1", 64, 7, 2, 3, false));
  net.add(pool(LayerKind::max_pool, "pool1", 3, 2, 1));
  std::string block_input = "pool1";
  const int64_t blocks_per_stage[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage) {
    const int64_t width = int64_t{64} << stage;
    for (int64_t b = 0; b < blocks_per_stage[stage]; ++b) {
      const std::string block = fmt::format("res{}{}", stage + 2, static_cast<char>('a' + b));
      const int64_t stride = (b == 0 && stage > 0) ? 2 : 1;
      std::string shortcut = block_input;
      if (b == 0) {
        shortcut = block + "_branch1";
        net.add(conv(shortcut, 4 * width, 1, stride, 0, false));
      }
      Layer branch2a = conv(block + "_branch2a", width, 1, 1, 0, false);
      if (b == 0) branch2a.input = block_input;  // not the projection just listed
      add_with_relu(net, std::move(branch2a));
      add_with_relu(net, conv(block + "_branch2b", width, 3, stride, 1, false));
      net.add(conv(block + "_branch2c", 4 * width, 1, 1, 0, false));
      Layer relu(LayerKind::relu, block + "_relu");
      relu.residual = shortcut;
      net.add(std::move(relu));
      block_input = block + "_relu";
    }
  }
  net.add(pool(LayerKind::avg_pool, "pool5", 7, 1, 0));
  net.add(Layer(LayerKind::flatten, "flatten"));
  add_classifier_end(net, "fc1000", 1000);
  return net;
}

// Five stages of 3x3 convolutions (pad 1), each closed by a 2x2/2 max pool, then three fc.
Network vgg16() {
  Network net("vgg16", {3, 224, 224});
  const int64_t channels[] = {64, 128, 256, 512, 512};
  const int convs_per_stage[] = {2, 2, 3, 3, 3};
  for (int stage = 0; stage < 5; ++stage) {
    for (int i = 1; i <= convs_per_stage[stage]; ++i) {
      add_with_relu(net,
                    conv(fmt::format("conv{}_{}", stage + 1, i), channels[stage], 3, 1, 1, true));
    }
    net.add(pool(LayerKind::max_pool, fmt::format("pool{}", stage + 1), 2, 2, 0));
  }
  net.add(Layer(LayerKind::flatten, "flatten"));
  add_with_relu(net, fc("fc6", 4096));
  add_with_relu(net, fc("fc7", 4096));
  add_classifier_end(net, "fc8", 1000);
  return net;
}

Network fmnist() {
  Network net("fmnist", {1, 28, 28});
  add_with_relu(net, conv("conv1", 32, 3, 1, 1, true));
  add_with_relu(net, conv("conv2", 64, 3, 1, 1, true));
  net.add(pool(LayerKind::max_pool, "pool1", 2, 2, 0));
  add_with_relu(net, conv("conv3", 128, 3, 1, 1, true));
  net.add(pool(LayerKind::max_pool, "pool2", 2, 2, 0));
  net.add(Layer(LayerKind::flatten, "flatten"));
  add_with_relu(net, fc("fc1", 256));
  add_classifier_end(net, "fc2", 10);
  return net;
}

Layer batch_norm(std::string name) { return Layer(LayerKind::batch_norm, std::move(name)); }

// A torchvision BasicBlock: conv 3x3 (stride) - bn - relu - conv 3x3 - bn, plus the block input
// or its projection (conv 1x1 with the stride, then bn: `downsample.0` and `.1`), then relu.
// Named as PyTorch names the module's parameters (layer2.0.conv1, layer2.0.downsample.0, ...).
std::string add_basic_block(Network& net, const std::string& block, const std::string& input, int64_t width,
                            int64_t stride, bool project) {
  std::string shortcut = input;
  if (project) {
    Layer proj = conv(block + ".downsample.0", width, 1, stride, 0, false);
    proj.input = input;
    net.add(std::move(proj));
    net.add(batch_norm(block + ".downsample.1"));
    shortcut = block + ".downsample.1";
  }
  Layer conv1 = conv(block + ".conv1", width, 3, stride, 1, false);
  conv1.input = input;
  net.add(std::move(conv1));
  net.add(batch_norm(block + ".bn1"));
  net.add(Layer(LayerKind::relu, block + ".relu1"));
  net.add(conv(block + ".conv2", width, 3, 1, 1, false));
  net.add(batch_norm(block + ".bn2"));
  Layer relu(LayerKind::relu, block + ".relu2");
  relu.residual = shortcut;
  net.add(std::move(relu));
  return block + ".relu2";
}

// A small residual network with batch normalization for Fashion-MNIST: conv 3x3 (32) - bn -
// relu, then three stages of one BasicBlock each at 32, 64 and 128 channels (28x28, 14x14, 7x7),
// global average pooling and fc 10. bench/torch_networks.py is the same module in PyTorch.
Network resnet_fmnist() {
  Network net("resnet-fmnist", {1, 28, 28});
  net.add(conv("conv1", 32, 3, 1, 1, false));
  net.add(batch_norm("bn1"));
  net.add(Layer(LayerKind::relu, "relu"));
  std::string x = add_basic_block(net, "layer1.0", "relu", 32, 1, false);
  x = add_basic_block(net, "layer2.0", x, 64, 2, true);
  x = add_basic_block(net, "layer3.0", x, 128, 2, true);
  net.add(Layer(LayerKind::global_avg_pool, "avgpool"));
  net.add(Layer(LayerKind::flatten, "flatten"));
  add_classifier_end(net, "fc", 10);
  return net;
}

constexpr std::pair<const char*, Network (*)()> kBuiltinNetworks[] = {
    {"resnet50", resnet50}, {"vgg16", vgg16}, {"fmnist", fmnist}, {"resnet-fmnist", resnet_fmnist}};

}  // namespace

std::vector<std::string> builtin_network_names() {
  std::vector<std::string> names;
  for (const auto& [name, make] : kBuiltinNetworks) names.emplace_back(name);
  return names;
}

Network builtin_network(const std::string& name) {
  for (const auto& [known, make] : kBuiltinNetworks) {
    if (name == known) return make();
  }
  throw InputError(fmt::format("unknown network '{}' (built-in: {})", name,
                               fmt::join(builtin_network_names(), ", ")));
}

}  // namespace convgrid
