// Training checkpoints in the global layout: every parameter and its momentum, then every state
// tensor (batch-norm running statistics), as whole tensors
// (KCRS weights, K biases), so a checkpoint loads at any rank count or grid.
// The file format and its strict decoder are in train/checkpoint_file.hpp.
// Written by rank 0 to a temporary file in the directory, flushed and fsynced, then renamed to
// step-<8-digit step>.ckpt and the directory fsynced: a checkpoint is either whole or absent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "convgrid/error.hpp"
#include "convgrid/memory.hpp"
#include "train/checkpoint_file.hpp"
#include "train/dist_net.hpp"

namespace convgrid {

// The path of the checkpoint of a step in a directory.
std::string checkpoint_path(const std::string& dir, int64_t step);

// Collective over `world`: gathers every shard and its momentum to rank 0, which writes the file
// atomically. Returns the path written. Throws InputError when the directory cannot be written.
std::string write_checkpoint(const Communicator& world, const std::string& dir, const TrainState& state,
                             const std::vector<ParamShard>& params,
                             const std::vector<TrackedVector<float>>& momentum,
                             const std::vector<ParamShard>& state_tensors = {});

// A valid checkpoint of another run: another network, batch or seed, or another recipe (the
// learning rate, its schedule, the optimiser, the data or its augmentation; TrainState::recipe).
// Resuming from it would silently train something else, and so would starting afresh in its
// directory: the job stops instead, naming the first option that differs.
class OtherRunCheckpoint : public InputError {
 public:
  using InputError::InputError;
};

// Reads a checkpoint and, when it is valid and matches the run (network, batch, seed, recipe,
// tensors, and its next batch lies within the run's `batches_per_epoch`), fills this rank's
// shards and momentum and returns its state. InputError with the reason otherwise ("... is
// corrupt: checksum ..."), OtherRunCheckpoint for another run's; nothing is filled then. A
// checkpoint without a recipe (written before it was recorded) is not checked for one. Every
// rank reads the file.
TrainState read_checkpoint(const std::string& path, const TrainState& expected,
                           int64_t batches_per_epoch, std::vector<ParamShard>& params,
                           std::vector<TrackedVector<float>>& momentum,
                           std::vector<ParamShard>& state_tensors);

// Copies this rank's slice of a parameter (p.slice of p.global) out of the whole tensor `whole`
// (row-major, p.global's extents) into `dst`: how a checkpoint's or an ONNX model's whole tensors
// become shards.
void copy_shard_of_whole(const ParamShard& p, const float* whole, float* dst);

// Removes what a run killed while writing left behind (the temporary .step-<step>.ckpt.tmp, never
// taken for a checkpoint), so that it does not hold the space the next checkpoint needs. Rank 0
// does it; the other ranks return at once.
void remove_partial_checkpoints(const Communicator& world, const std::string& dir);

// The checkpoints in `dir`, newest (highest step) first.
std::vector<std::string> list_checkpoints(const std::string& dir);

}  // namespace convgrid
