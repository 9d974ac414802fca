// Tests of ReLU6 against ReLU where they bend, x = -1, 0, 3, 6, 7: the vectorised in-place
// kernels and the per-value functions (train/elementwise.hpp), and the training layers on one
// rank, in place (the input's sole reader) and into buffers of their own (another layer reads the
// input too), with exact values. ReLU6 passes the gradient strictly inside (0, 6), as PyTorch's
// hardtanh(0, 6) backward does: at x = 3 only, not at 0 or 6. The add layer, which shares their
// class, is the identity there (its sum is the residual add's work, before it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "comm/communicator.hpp"
#include "nn/network.hpp"
#include "one_element_wise_layer.hpp"
#include "one_rank_mpi.hpp"
#include "train/elementwise.hpp"
#include "train/layer_registry.hpp"

namespace convgrid {
namespace {

using Floats = std::vector<float>;
using test_layers::OneLayer;

const Floats kX = {-1, 0, 3, 6, 7};
const Floats kDy = {10, 20, 30, 40, 50};

struct Expected {
  LayerKind kind;
  Floats y, dx;  // dx: the gradient written in place (no other reader)
};

const Expected kRelu6{LayerKind::relu6, {0, 0, 3, 6, 6}, {0, 0, 30, 0, 0}};
const Expected kRelu{LayerKind::relu, {0, 0, 3, 6, 7}, {0, 0, 30, 40, 50}};
const Expected kAdd{LayerKind::add, kX, kDy};

TEST(Relu6Kernels, BoundaryValuesInPlaceAndPerValue) {
  Floats y = kX;
  relu6_forward(y.data(), static_cast<int64_t>(y.size()));
  EXPECT_EQ(y, kRelu6.y);
  Floats grad = kDy;
  relu6_backward(y.data(), grad.data(), static_cast<int64_t>(grad.size()));
  EXPECT_EQ(grad, kRelu6.dx);
  for (size_t i = 0; i < kX.size(); ++i) {
    EXPECT_EQ(relu6(kX[i]), kRelu6.y[i]) << kX[i];
    EXPECT_EQ(relu6_passes(kRelu6.y[i]), kRelu6.dx[i] != 0) << kX[i];
  }
}

// Longer than any vector, so that the vector loops and their remainders both run.
TEST(Relu6Kernels, VectorLoopsMatchThePerValueFunction) {
  Floats x(37), y(37), grad(37, 1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -2.0f + 0.25f * static_cast<float>(i);  // -2 .. 7
  y = x;
  relu6_forward(y.data(), static_cast<int64_t>(y.size()));
  relu6_backward(y.data(), grad.data(), static_cast<int64_t>(grad.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(y[i], relu6(x[i])) << x[i];
    EXPECT_EQ(grad[i], x[i] > 0 && x[i] < 6 ? 1.0f : 0.0f) << x[i];
  }
}

Floats first5(const float* p) { return Floats(p, p + 5); }

// In place, the layer's output is its input's storage and backward overwrites the gradient; into
// buffers, backward adds to what the other reader left in the input's gradient (here 0.5).
TEST(ReluLayers, BoundaryValuesInPlaceAndIntoBuffers) {
  const Communicator world = Communicator::world();
  for (const Expected& e : {kRelu6, kRelu, kAdd}) {
    for (bool in_place : {true, false}) {
      SCOPED_TRACE(testing::Message()
                   << to_string(e.kind) << (in_place ? " in place" : " buffers"));
      OneLayer layer(e.kind, in_place);
      EXPECT_EQ(layer->in_place(), in_place);
      EXPECT_EQ(layer->buffers().size(), in_place ? 0u : 2u);
      Floats x = kX, dx(5, in_place ? 0.0f : 0.5f);
      const ActivationData out = layer->bind(world, {x.data(), dx.data()}, {});
      EXPECT_EQ(out.data == x.data(), in_place);
      EXPECT_EQ(out.grad == dx.data(), in_place);
      StepContext step;
      layer->forward(step);
      EXPECT_EQ(first5(out.data), e.y);
      std::copy(kDy.begin(), kDy.end(), out.grad);
      layer->backward(step);
      Floats want = e.dx;
      if (!in_place) {
        for (float& v : want) v += 0.5f;
      }
      EXPECT_EQ(dx, want);
    }
  }
}

// relu6 and add hold what relu holds, so the memory model (which adds up these descriptions) is
// the same; relu6's backward reads the output as relu's does, add's reads nothing (the output's
// values may be gone by then), and add moves nothing.
TEST(ReluLayers, Relu6AndAddDescribeTheBuffersOfRelu) {
  for (LayerKind kind : {LayerKind::relu6, LayerKind::add}) {
    for (bool sole_reader : {true, false}) {
      SCOPED_TRACE(testing::Message() << to_string(kind) << (sole_reader ? " in place" : ""));
      OneLayer relu(LayerKind::relu, sole_reader), other(kind, sole_reader);
      ASSERT_EQ(other->buffers().size(), relu->buffers().size());
      for (size_t i = 0; i < relu->buffers().size(); ++i) {
        const BufferSpec &a = other->buffers()[i], &b = relu->buffers()[i];
        EXPECT_EQ(a.role, b.role);
        EXPECT_EQ(a.group, b.group);
        EXPECT_EQ(a.bytes, b.bytes);
        EXPECT_EQ(a.life, b.life);
      }
      const StorageUse use = other->storage_use();
      EXPECT_EQ(use.reads_output_in_backward, kind == LayerKind::relu6);
      EXPECT_FALSE(use.reads_input_in_backward || use.writes_input_grad_in_forward);
      EXPECT_EQ(other->modelled_words().total() + other->modelled_edge_words().total(), 0);
      EXPECT_EQ(other->kind(), to_string(kind));
    }
  }
}

}  // namespace
}  // namespace convgrid
