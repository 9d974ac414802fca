// The bytes of a training checkpoint: its format, the encoder and a strict decoder. Pure; no MPI
// (train/checkpoint.hpp gathers a run's tensors into one and scatters them back).
//
// File format (all little-endian), deterministic bytes (no time stamps, no rank count):
//   8 bytes   "CVGCKPT1"
//   8 bytes   uint64 length L of the header
//   L bytes   header, JSON: {"network", "batch", "seed", "epoch", "batch_in_epoch", "step",
//             "epoch_loss_sum", "epoch_correct", "epoch_samples",
//             "tensors": [{"name", "shape": [4 extents], "offset", "count"}]}  (offsets in floats)
//   4*F bytes float32 data of every tensor, in header order
//   4 bytes   CRC-32 (zlib) of everything before it
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

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
  // The options that shape the run's trajectory (the learning rate and its schedule, the
  // optimiser, the data and its augmentation), by flag name without dashes ("lr", "flip"), each
  // as the run printed it. Empty in a checkpoint written before they were recorded.
  std::map<std::string, std::string> recipe;
};

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

// The file's bytes, tensors stored one after the other in the given order.
std::string checkpoint_bytes(const CheckpointFile& file);

// Decodes a file's bytes; `path` names it in errors. Checks the magic, the header length, the
// CRC-32, that the header is JSON with every field of the right type, every counter a whole
// number >= 0 (epoch_correct <= epoch_samples, batch_in_epoch <= step), the loss sum finite, and
// that every tensor has 4 extents, their product as its count and lies within the data.
// InputError "checkpoint PATH is corrupt: ..." otherwise.
CheckpointFile parse_checkpoint(std::string_view bytes, const std::string& path);

// Reads a file and decodes it ("PATH: cannot open for reading" when it cannot be read).
CheckpointFile read_checkpoint_file(const std::string& path);

}  // namespace convgrid
