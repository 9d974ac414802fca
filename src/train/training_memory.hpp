// Per-rank memory of a whole training job (DistNet with SGD), in bytes: the buffers each layer
// describes (train/train_layer.hpp), which are the ones it allocates when it runs, everything
// MemoryTracker counts while the job runs. Every buffer is allocated when the network is built and
// kept between steps, so the job's peak is the sum of all of them. Pure; no MPI.
//
//   activations  the step's arena (train/step_memory.hpp): each layer's output and its gradient
//                where it owns them (in-place layers share their input's), the inputs a layer
//                reads in a spread of its own and their gradients, pooling's argmax indices,
//                each placed for its life in the step, so that buffers whose lives do not meet
//                share bytes
//   parameters   weights, biases and batch-norm scales and shifts as each rank holds them, their
//                gradients and momentum, batch-norm statistics
//   exchanges    the staging buffers of redistributions and pooling halos that move anything
//   layers       each compute layer's algorithm beyond its at-rest slices (algo/dist_conv.hpp:
//                the layer model, model/grid_memory.hpp and model/streamed_memory.hpp, for the
//                passes it runs; the first layer skips backward-data)
//
// Not counted (not MemoryTracker's): the data set this rank reads for an epoch, MPI's and
// oneDNN's internal buffers, labels and other small vectors.
#pragma once

#include <cstdint>
#include <vector>

#include "convgrid/local_conv.hpp"
#include "nn/network.hpp"
#include "plan/layer_planner.hpp"

namespace convgrid {

struct TrainingMemory {
  int64_t activations = 0, parameters = 0, exchanges = 0, layers = 0;
  int64_t total() const { return activations + parameters + exchanges + layers; }
};

// The bytes rank `rank` of `procs` holds when DistNet runs `plans` (one per compute layer, as
// DistNet takes them) at `batch`. Throws InputError as DistNet's constructor does for a network
// or plans it does not run.
TrainingMemory training_memory(const Network& net, const std::vector<LayerPlan>& plans,
                               int64_t batch, int64_t procs, int64_t rank,
                               Backend engine = Backend::onednn);

// The largest total over all ranks (and that rank's breakdown).
TrainingMemory busiest_training_memory(const Network& net, const std::vector<LayerPlan>& plans,
                                       int64_t batch, int64_t procs,
                                       Backend engine = Backend::onednn);

}  // namespace convgrid
