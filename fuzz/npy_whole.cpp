// Fuzzes whole-file .npy reading (read_npy_header, read_npy): the input is the file. A header
// it accepts must describe exactly the file's bytes, and the data read must be that many floats.
#include <cstring>

#include "convgrid/npy.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace convgrid;
  static const fuzz::InputFile file("whole.npy");
  const std::string& path = file.write(data, size);
  fuzz::only_input_errors(path, [&] {
    const NpyHeader h = read_npy_header(path);
    fuzz::require(h.data_offset + 4 * h.elems() == static_cast<int64_t>(size),
                  "the header does not describe the file's size");
    const NpyArray a = read_npy(path, &h.shape);
    fuzz::require(a.shape == h.shape && a.data.size() == h.elems(),
                  "read_npy disagrees with its header");
    fuzz::require(
        h.elems() == 0 || std::memcmp(a.data.data(), data + h.data_offset, 4 * h.elems()) == 0,
        "read_npy's data is not the file's");
  });
  return 0;
}
