// Fuzzes the per-rank .npy read below its MPI-IO (io/npy_slices.cpp needs a communicator): the
// header check every rank makes (read_npy_header, check_npy_shape against the tensor's 4-D box),
// then each rank's slice read run by run at data_offset, as the SMPI build does with pread. The
// input is the file; the box is its own shape when that has 4 extents, else a fixed one (which
// it then must not match). Every run of every rank of 1, 2, 3 and 5 must lie within the file.
#include <fcntl.h>
#include <unistd.h>

#include <vector>

#include "convgrid/npy.hpp"
#include "fuzz_input.hpp"
#include "layout/box.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace convgrid;
  static const fuzz::InputFile file("slice.npy");
  const std::string& path = file.write(data, size);
  fuzz::only_input_errors(path, [&] {
    const NpyHeader h = read_npy_header(path);
    const std::vector<int64_t> extents =
        h.shape.size() == 4 ? h.shape : std::vector<int64_t>{2, 3, 4, 5};
    check_npy_shape(path, h, extents, "the fuzzed tensor");
    const Box4 global{
        {Range{0, extents[0]}, Range{0, extents[1]}, Range{0, extents[2]}, Range{0, extents[3]}}};
    const int fd = ::open(path.c_str(), O_RDONLY);
    fuzz::require(fd >= 0, "cannot open " + path);
    std::vector<float> run;
    for (int64_t parts : {1, 2, 3, 5}) {
      for (int64_t j = 0; j < parts; ++j) {
        for_each_run(split_block(global, parts, j),
                     [&](int64_t a, int64_t b, int64_t c, int64_t x0, int64_t x1, int64_t) {
                       run.resize(static_cast<size_t>(x1 - x0));
                       const auto bytes = static_cast<ssize_t>(4 * run.size());
                       const off_t at = h.data_offset + 4 * global.offset(a, b, c, x0);
                       fuzz::require(::pread(fd, run.data(), bytes, at) == bytes,
                                     "a run of a slice lies beyond the end of the file");
                     });
      }
    }
    ::close(fd);
  });
  return 0;
}
