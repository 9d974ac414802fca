// The reads both IDX harnesses make of a file: the header, then images and labels of ranges and
// of scattered samples derived from the header's count, each of which must end in data or an
// InputError naming the file (a file of the other kind, a short one).
#pragma once

#include <string>
#include <vector>

#include "fuzz_input.hpp"
#include "io/idx.hpp"

namespace convgrid::fuzz {

inline void read_idx_every_way(const std::string& path) {
  only_input_errors(path, [&] {
    const IdxHeader h = read_idx_header(path);
    const int64_t count = h.dims[0];
    require(idx_count(path) == count, "idx_count disagrees with read_idx_header");
    for (const Range r : {Range{0, count}, Range{count / 2, count}, Range{count, count}}) {
      only_input_errors(path, [&] {
        const ImageSet set = read_idx_images(path, r);
        require(set.count == r.size() && std::ssize(set.pixels) == set.count * set.rows * set.cols,
                "read_idx_images returned the wrong number of pixels");
      });
      only_input_errors(path, [&] {
        require(std::ssize(read_idx_labels(path, r)) == r.size(),
                "read_idx_labels returned the wrong number of labels");
      });
    }
    std::vector<int64_t> samples = {0};
    if (count / 2 > 0) samples.push_back(count / 2);
    if (count - 1 > samples.back()) samples.push_back(count - 1);
    only_input_errors(path, [&] {
      const ImageSet set = read_idx_images_at(path, samples);
      require(std::ssize(set.pixels) == set.count * set.rows * set.cols,
              "read_idx_images_at returned the wrong number of pixels");
    });
  });
}

}  // namespace convgrid::fuzz
