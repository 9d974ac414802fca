// Layer kind -> factory.
#include "train/layer_registry.hpp"

#include <fmt/format.h>

#include "convgrid/error.hpp"

namespace convgrid {

// Defined each in its own file of train/layers/ (relu6 and add in relu_layer.cpp, with relu).
std::unique_ptr<TrainLayer> make_conv_layer(const LayerSetup& setup);
std::unique_ptr<TrainLayer> make_relu_layer(const LayerSetup& setup);
std::unique_ptr<TrainLayer> make_relu6_layer(const LayerSetup& setup);
std::unique_ptr<TrainLayer> make_add_layer(const LayerSetup& setup);
// sigmoid, tanh, hardsigmoid, hardswish and silu: smooth_activation_layer.cpp.
std::unique_ptr<TrainLayer> make_smooth_activation_layer(const LayerSetup& setup);
std::unique_ptr<TrainLayer> make_pool_layer(const LayerSetup& setup);
std::unique_ptr<TrainLayer> make_batch_norm_layer(const LayerSetup& setup);
std::unique_ptr<TrainLayer> make_flatten_layer(const LayerSetup& setup);
std::unique_ptr<TrainLayer> make_softmax_xent_layer(const LayerSetup& setup);
std::unique_ptr<TrainLayer> make_residual_add_layer(const LayerSetup& setup);
std::unique_ptr<TrainLayer> make_concat_layer(const LayerSetup& setup);
std::unique_ptr<TrainLayer> make_scale_layer(const LayerSetup& setup);

namespace {

using Factory = std::unique_ptr<TrainLayer> (*)(const LayerSetup&);

constexpr std::pair<LayerKind, Factory> kFactories[] = {
    {LayerKind::conv, make_conv_layer},
    {LayerKind::fully_connected, make_conv_layer},
    {LayerKind::relu, make_relu_layer},
    {LayerKind::relu6, make_relu6_layer},
    {LayerKind::add, make_add_layer},
    {LayerKind::sigmoid, make_smooth_activation_layer},
    {LayerKind::tanh, make_smooth_activation_layer},
    {LayerKind::hardsigmoid, make_smooth_activation_layer},
    {LayerKind::hardswish, make_smooth_activation_layer},
    {LayerKind::silu, make_smooth_activation_layer},
    {LayerKind::concat, make_concat_layer},
    {LayerKind::scale, make_scale_layer},
    {LayerKind::max_pool, make_pool_layer},
    {LayerKind::avg_pool, make_pool_layer},
    {LayerKind::global_avg_pool, make_pool_layer},
    {LayerKind::batch_norm, make_batch_norm_layer},
    {LayerKind::flatten, make_flatten_layer},
    {LayerKind::softmax_xent, make_softmax_xent_layer},
};

}  // namespace

std::unique_ptr<TrainLayer> make_train_layer(const LayerSetup& setup) {
  const Layer& layer = setup.layer();
  for (const auto& [kind, make] : kFactories) {
    if (kind == layer.kind) return make(setup);
  }
  throw InputError(fmt::format("layer '{}': training does not run {} layers", layer.name,
                               to_string(layer.kind)));
}

std::unique_ptr<TrainLayer> make_residual_add(const LayerSetup& setup) {
  return make_residual_add_layer(setup);
}

}  // namespace convgrid
