// Training checkpoints in the global layout: every parameter and its momentum, then every state
// tensor (batch-norm running statistics), as whole tensors
// (KCRS weights, K biases), so a checkpoint loads at any rank count or grid.
//
// File format (all little-endian), deterministic bytes (no time stamps, no rank count):
//   8 bytes   "CVGCKPT1"
//   8 bytes   uint64 length L of the header
//   L bytes   header, JSON: {"network", "batch", "seed", "epoch", "batch_in_epoch", "step",
//             "epoch_loss_sum", "epoch_correct", "epoch_samples",
//             "tensors": [{"name", "shape": [4 extents], "offset", "count"}]}  (offsets in floats)
//   4*F bytes float32 data of every tensor, in header order
//   4 bytes   CRC-32 (zlib) of everything before it
// Written by rank 0 to a temporary file in the directory, flushed and fsynced, then renamed to
// step-<8-digit step>.ckpt and the directory fsynced: a checkpoint is either whole or absent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "convgrid/memory.hpp"
#include "train/dist_net.hpp"

namespace convgrid {

// Where training stands: the next batch to run is `batch_in_epoch` of epoch `epoch` (0-based);
// `step` batches have run in all; the running sums of the current epoch's training loss.
struct TrainState {
  std::string network;
  int64_t batch = 0;
  uint64_t seed = 0;
  int64_t epoch = 0, batch_in_epoch = 0, step = 0;
  double epoch_loss_sum = 0;  // sum over the epoch's batches of loss * real samples
  int64_t epoch_correct = 0, epoch_samples = 0;
};

// The path of the checkpoint of a step in a directory.
std::string checkpoint_path(const std::string& dir, int64_t step);

// Collective over `world`: gathers every shard and its momentum to rank 0, which writes the file
// atomically. Returns the path written. Throws InputError when the directory cannot be written.
std::string write_checkpoint(const Communicator& world, const std::string& dir, const TrainState& state,
                             const std::vector<ParamShard>& params,
                             const std::vector<TrackedVector<float>>& momentum,
                             const std::vector<ParamShard>& state_tensors = {});

// One tensor of a checkpoint as stored: its name ("<layer>.weight", "<layer>.bias", or either
// followed by ".momentum"), its 4 extents (K x 1 x 1 x 1 for a bias) and its values in C order.
struct CheckpointTensor {
  std::string name;
  std::vector<int64_t> shape;  // 4 extents
  std::vector<float> values;   // prod(shape)
};

// A whole checkpoint file: the state and the tensors in file order.
struct CheckpointFile {
  TrainState state;
  std::vector<CheckpointTensor> tensors;
};

// Reads a checkpoint without a run to match: checks the magic, the header length, the CRC-32,
// the header's fields and that every tensor has 4 extents, its count and lies within the data.
// InputError "checkpoint PATH is corrupt: ..." otherwise ("PATH: cannot open for reading" when
// it cannot be read).
CheckpointFile read_checkpoint_file(const std::string& path);

// Reads a checkpoint and, when it is valid and matches the run (network, batch, seed, tensors),
// fills this rank's shards and momentum and returns its state. InputError with the reason
// otherwise ("... is corrupt: checksum ...", "... is for network X"). Every rank reads the file.
TrainState read_checkpoint(const std::string& path, const TrainState& expected,
                           std::vector<ParamShard>& params, std::vector<TrackedVector<float>>& momentum,
                           std::vector<ParamShard>& state_tensors);

// The checkpoints in `dir`, newest (highest step) first.
std::vector<std::string> list_checkpoints(const std::string& dir);

}  // namespace convgrid
