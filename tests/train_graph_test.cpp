// The training graph (train/train_graph.hpp) of networks with concats, without MPI: an operand that
// is the network input is refused in one line naming the concat, and a concat naming one layer
// twice gets both reads as operands (neither the sole reader). That the concats train right on
// every grid is checked where the network runs (tests/mpi/dist_net_test.cpp).
#include "train/train_graph.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "throws_input_error.hpp"

namespace convgrid {
namespace {

Layer fc(const char* name, const char* input, int64_t K) {
  Layer l(LayerKind::fully_connected, name);
  l.input = input;
  l.conv.K = K;
  return l;
}

Layer concat(const char* name, const char* input, std::vector<std::string> operands) {
  Layer l(LayerKind::concat, name);
  l.input = input;
  l.concat_inputs = std::move(operands);
  return l;
}

// flatten 'flat' of the input, fc 'fc1' of it, then `cat`, an fc and the loss.
Network joining_input(Layer cat) {
  Network net("joins", {2, 3, 3});
  net.add(Layer(LayerKind::flatten, "flat"));
  net.add(fc("fc1", "flat", 4));
  net.add(std::move(cat));
  net.add(fc("fc2", "", 3));
  net.add(Layer(LayerKind::softmax_xent, "loss"));
  return net;
}

TEST(TrainGraph, RefusesAConcatOperandThatIsTheNetworkInput) {
  for (const Layer& cat : {concat("cat", "fc1", {"flat"}), concat("cat", "flat", {"fc1"})}) {
    const Network net = joining_input(cat);
    EXPECT_TRUE(throws_input_error([&] { check_trainable(net); },
                                   {"layer 'cat'", "concat operand 'flat'", "network input"}));
  }
}

TEST(TrainGraph, AConcatReadingALayerTwiceHasTwoOperands) {
  Network net("twice", {2, 4, 4});
  Layer c(LayerKind::conv, "c");
  c.conv.K = 3;
  c.conv.R = c.conv.S = 1;
  net.add(c);
  net.add(concat("cat", "c", {"c", "c"}));
  net.add(Layer(LayerKind::flatten, "flat"));
  net.add(fc("fc", "", 2));
  net.add(Layer(LayerKind::softmax_xent, "loss"));
  std::vector<LayerPlan> plans;
  for (const ComputeLayer& l : net.compute_layers()) {
    plans.push_back(evaluate_grid(conv_shape(net.layers()[l.layer], 2), GridDims{}, PlanOptions{}));
  }
  const TrainGraph graph(net, plans, 2, 1, 0);
  const TrainGraph::Node& cat = graph.nodes()[1];
  ASSERT_EQ(cat.layer->kind(), "concat");
  EXPECT_EQ(cat.input, 0);
  EXPECT_EQ(cat.operands, (std::vector<int>{0, 0}));
  EXPECT_FALSE(cat.layer->in_place());
  EXPECT_EQ(cat.layer->output().placement->tensor().extent(1), 9);
  // Three reads of c: none is the sole reader, so each operand has its own gradient buffer.
  int grads = 0;
  for (const BufferSpec& b : cat.layer->buffers()) grads += b.role.rfind("doperand", 0) == 0;
  EXPECT_EQ(grads, 3);
}

}  // namespace
}  // namespace convgrid
