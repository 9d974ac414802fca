// Fuzzes checkpoint decoding (parse_checkpoint, what read_checkpoint_file does with a file's
// bytes), twice per input: as it is, then with its last 4 bytes replaced by the right CRC-32 so
// that the header and the tensors are reached. A checkpoint it accepts encodes
// (checkpoint_bytes) to bytes that decode and encode to the same bytes.
#include <zlib.h>

#include <cstring>
#include <string>

#include "fuzz_input.hpp"
#include "train/checkpoint_file.hpp"

namespace {

void decode(const std::string& bytes) {
  using namespace convgrid;
  fuzz::only_input_errors("checkpoint fuzz.ckpt ", [&] {
    const std::string encoded = checkpoint_bytes(parse_checkpoint(bytes, "fuzz.ckpt"));
    fuzz::require(checkpoint_bytes(parse_checkpoint(encoded, "encoded.ckpt")) == encoded,
                  "checkpoint_bytes does not decode back");
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  decode(bytes);
  if (bytes.size() >= 4) {
    const auto crc = static_cast<uint32_t>(
        crc32_z(0L, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size() - 4));
    std::memcpy(bytes.data() + bytes.size() - 4, &crc, 4);
    decode(bytes);
  }
  return 0;
}
