// Fuzzes IDX reading of gzip files, twice per input: the input as the .gz file itself (damaged
// and cut streams, trailing bytes), then the input gzip-compressed (headers that promise more
// than a small compressed file holds).
#include <zlib.h>

#include "idx_reads.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace convgrid;
  static const fuzz::InputFile file("raw.idx.gz");
  fuzz::read_idx_every_way(file.write(data, size));

  static const fuzz::InputFile compressed("compressed.idx.gz");
  gzFile f = gzopen(compressed.path().c_str(), "wb");
  fuzz::require(f != nullptr, "cannot create " + compressed.path());
  fuzz::require(
      size == 0 || gzwrite(f, data, static_cast<unsigned>(size)) == static_cast<int>(size),
      "cannot write " + compressed.path());
  fuzz::require(gzclose(f) == Z_OK, "cannot close " + compressed.path());
  fuzz::read_idx_every_way(compressed.path());
  return 0;
}
