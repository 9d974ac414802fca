// A network's layers as one rank trains them (SPEC section 8), built from the network and one
// plan per compute layer. Pure: no MPI until DistNet binds the layers.
//
// The network is a DAG: a layer reads the output of the layer before it or of the earlier layer
// its `input` names, a layer with a `residual` first adds that layer's output to its input (a
// residual add node of its own, train/layers/residual_add_layer.cpp), and a concat also reads the
// layers its `concat_inputs` name (train/layers/concat_layer.cpp). Nodes are in network order,
// which is an order of the DAG; forward runs them in order, backward in reverse. Each node's
// output lies where its kind puts it (train/train_layer.hpp); between two compute layers, into a
// residual add, and into a concat for each operand, one all-to-all moves the activation where the
// two spreads differ, which is what the network planner's edges count (plan/network_planner.hpp).
//
// The network input is read by one compute layer (a flatten may come between), whose input slice
// the loader fills; no residual and no concat reads it. The network ends with softmax_xent.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "nn/network.hpp"
#include "plan/layer_planner.hpp"
#include "train/train_layer.hpp"

namespace convgrid {

// Throws InputError naming the layer unless training runs the network's structure (as above);
// the layers' own checks (a pooling layer after a convolution, ...) come when they are built.
void check_trainable(const Network& net);

class TrainGraph {
 public:
  struct Node {
    std::unique_ptr<TrainLayer> layer;
    int input = -1;  // the node whose output it reads; -1: the network input
    // The nodes of its other inputs (LayerSetup::operands), in order: a residual add's shortcut,
    // a concat's operands after its input (a node may repeat).
    std::vector<int> operands;
    size_t network_layer = 0;
    std::optional<size_t> compute_index;  // conv and fully connected layers: their plan's index
  };

  // Throws InputError naming the layer for a network training does not run (see above), and for
  // plans that do not match its compute layers.
  // `cache`: shared by the graphs of every rank of one job (LayerSetup::cache).
  TrainGraph(const Network& net, const std::vector<LayerPlan>& plans, int64_t batch, int64_t procs,
             int64_t rank, uint64_t seed = 0, Backend engine = Backend::onednn,
             JobCache* cache = nullptr);

  std::vector<Node>& nodes() { return nodes_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  // The node of the first compute layer (it reads the network input) and that input's tensor
  // and this rank's slice of it, in the layer's view (N x C*H*W x 1 x 1 for a fully connected).
  size_t first_node() const { return first_node_; }
  const Box4& input_tensor() const { return input_tensor_; }
  const Slice& input_slice() const { return input_slice_; }

 private:
  std::vector<Node> nodes_;
  size_t first_node_ = 0;
  Box4 input_tensor_;
  Slice input_slice_;
};

}  // namespace convgrid
