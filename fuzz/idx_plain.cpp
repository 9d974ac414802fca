// Fuzzes IDX reading of plain (uncompressed) files: the input is the file.
#include "idx_reads.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const convgrid::fuzz::InputFile file("plain.idx");
  convgrid::fuzz::read_idx_every_way(file.write(data, size));
  return 0;
}
