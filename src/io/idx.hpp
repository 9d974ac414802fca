// IDX files of unsigned bytes (the MNIST and Fashion-MNIST format), gzip-compressed or plain.
//
// File layout, all big-endian: 0x00 0x00, a type code (0x08 = unsigned byte, the only one read
// here), the number of dimensions d, then d uint32 sizes, then prod(sizes) bytes of data in
// C order. Image files have 3 dimensions (count, rows, cols), label files 1 (count).
// Files are read through zlib's gzFile, which reads uncompressed files transparently.
//
// Readers take a half-open range of samples so that each MPI rank reads only its own: the bytes
// before the range are decompressed and discarded, those after it are never read. Opening a file
// checks its header against its size first: a plain file must hold all the data the header
// promises, a gzip file at most 1032 times its size (deflate's limit), so that no header can
// make a reader allocate more than that. A gzip file truncated after the range is then only
// noticed by the reader whose range reaches into the gap.
//
// Every problem with a file is an InputError whose one-line message starts with the path.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "layout/range.hpp"

namespace convgrid {

struct IdxHeader {
  std::vector<int64_t> dims;  // at least one, none zero, product checked against overflow
};

// Reads and checks the header: magic, type code 0x08, 1 to 255 dimensions, no zero size, data
// that can fit in the file.
IdxHeader read_idx_header(const std::string& path);

// The first dimension (the number of samples) from the header.
int64_t idx_count(const std::string& path);

// Images [samples.begin, samples.end) of a file: count = samples.size() images of rows x cols
// pixels, stored count-major then row-major in `pixels`.
struct ImageSet {
  int64_t count = 0, rows = 0, cols = 0;
  std::vector<uint8_t> pixels;
};

// samples must lie within [0, count) of the file's header (an empty range is allowed).
ImageSet read_idx_images(const std::string& path, Range samples);

// The images of the given samples (strictly increasing, each within the file), in that order:
// the file is read once, skipping what lies between them.
ImageSet read_idx_images_at(const std::string& path, std::span<const int64_t> samples);

// Labels of samples [samples.begin, samples.end); each must be a class 0-9.
std::vector<uint8_t> read_idx_labels(const std::string& path, Range samples);

// Mean and standard deviation of Fashion-MNIST's training pixels scaled to [0, 1], as commonly
// used for normalisation.
inline constexpr float kFashionMnistMean = 0.2860f;
inline constexpr float kFashionMnistStd = 0.3530f;

// Writes (pixel / 255 - mean) / std for every pixel to out as float NCHW with N = images.count,
// C = 1, H = rows, W = cols, i.e. images.pixels.size() floats. std must be positive and finite.
void normalise_images(const ImageSet& images, float mean, float std, float* out);

// The four files of Fashion-MNIST as Debian's dataset-fashion-mnist installs them.
struct FashionMnist {
  std::string dir = "/usr/share/datasets/fashion-mnist";

  std::string train_images() const { return dir + "/train-images-idx3-ubyte.gz"; }
  std::string train_labels() const { return dir + "/train-labels-idx1-ubyte.gz"; }
  std::string test_images() const { return dir + "/t10k-images-idx3-ubyte.gz"; }
  std::string test_labels() const { return dir + "/t10k-labels-idx1-ubyte.gz"; }

  // The number of samples of each set, from the headers; an InputError naming both counts when
  // the image and label files of the set disagree.
  int64_t train_count() const;
  int64_t test_count() const;
};

}  // namespace convgrid
