// Reading IDX files through zlib's gzFile: a strict header parser, forward-only reads of a range
// of samples that count every byte so a truncated file is reported with what it holds, and the
// normalisation of images to float NCHW.
#include "io/idx.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string_view>

#include "convgrid/checked.hpp"
#include "convgrid/error.hpp"

namespace convgrid {
namespace {

constexpr uint8_t kUnsignedByte = 0x08;
constexpr int kClasses = 10;
constexpr int64_t kDeflateMaxRatio = 1032;  // bytes out per byte in, at most

std::string_view type_name(uint8_t code) {
  switch (code) {
    case 0x08:
      return "unsigned byte";
    case 0x09:
      return "signed byte";
    case 0x0B:
      return "short";
    case 0x0C:
      return "int";
    case 0x0D:
      return "float";
    case 0x0E:
      return "double";
    default:
      return "unknown";
  }
}

std::string dims_string(const std::vector<int64_t>& dims) {
  return fmt::format("({})", fmt::join(dims, ", "));
}

std::string hex_bytes(const uint8_t* bytes, int64_t n) {
  std::string s;
  for (int64_t i = 0; i < n; ++i) s += fmt::format("{}{:02x}", i == 0 ? "" : " ", bytes[i]);
  return s;
}

using GzFile = std::unique_ptr<gzFile_s, int (*)(gzFile)>;

// An open IDX file, its header checked, positioned in its data and reading forwards only.
class IdxReader {
 public:
  explicit IdxReader(const std::string& path) : path_(path), f_(nullptr, &gzclose) {
    errno = 0;
    f_.reset(gzopen(path.c_str(), "rb"));
    if (!f_) {
      throw InputError(fmt::format("{}: cannot open for reading: {}", path,
                                   errno != 0 ? std::strerror(errno) : "out of memory"));
    }
    read_header();
  }

  const IdxHeader& header() const { return header_; }

  // Checks that samples lies within [0, dims[0]).
  void check_range(Range samples) const {
    const int64_t count = header_.dims[0];
    if (samples.begin < 0 || samples.end > count || samples.begin > samples.end) {
      throw InputError(
          fmt::format("{}: sample range [{}, {}) is outside the file's {} samples "
                      "[0, {})",
                      path_, samples.begin, samples.end, count, count));
    }
  }

  // Decompresses and discards the next n bytes of data.
  void skip(int64_t n) {
    std::array<uint8_t, 1 << 16> scratch;
    while (n > 0) {
      const int64_t chunk = std::min<int64_t>(n, scratch.size());
      read(scratch.data(), chunk);
      n -= chunk;
    }
  }

  // Appends the next n bytes of data to out. out grows as they arrive, doubling up to
  // `final_bytes` (its size when the caller is done), so that what a header promises is
  // allocated only once the file delivers it.
  void read_append(std::vector<uint8_t>& out, int64_t n, int64_t final_bytes) {
    constexpr int64_t kChunk = int64_t{1} << 24;
    while (n > 0) {
      const int64_t chunk = std::min(n, kChunk);
      const size_t at = out.size();
      if (out.capacity() < at + static_cast<size_t>(chunk)) {
        out.reserve(std::min(static_cast<size_t>(final_bytes),
                             std::max(2 * out.capacity(), at + static_cast<size_t>(chunk))));
      }
      out.resize(at + static_cast<size_t>(chunk));
      read(out.data() + at, chunk);
      n -= chunk;
    }
  }

 private:
  // Reads the next n bytes of data into out.
  void read(uint8_t* out, int64_t n) {
    const int64_t got = read_some(out, n);
    data_read_ += got;
    if (got < n) {
      throw InputError(fmt::format(
          "{}: data truncated: dimensions {} need {} bytes of data but the file holds only {}",
          path_, dims_string(header_.dims), data_bytes_, data_read_));
    }
  }

  // Reads up to n bytes; fewer only at the end of the file.
  int64_t read_some(uint8_t* out, int64_t n) {
    int64_t got = 0;
    while (got < n) {
      const auto chunk = static_cast<unsigned>(std::min<int64_t>(n - got, 1 << 30));
      const int r = gzread(f_.get(), out + got, chunk);
      // At the end of the data gzread returns 0; after a damaged or cut gzip stream it returns
      // -1 or (for a stream cut short, which zlib does not count as fatal) 0 with an error set.
      int code = Z_OK;
      const char* msg = gzerror(f_.get(), &code);
      if (r < 0 || code != Z_OK) {
        throw InputError(
            fmt::format("{}: read error: {}", path_, code == Z_ERRNO ? std::strerror(errno) : msg));
      }
      if (r == 0) break;
      got += r;
    }
    return got;
  }

  void read_header() {
    std::array<uint8_t, 4> magic{};
    const int64_t got = read_some(magic.data(), 4);
    if (got < 4 || magic[0] != 0 || magic[1] != 0) {
      throw InputError(fmt::format(
          "{}: not an IDX file, gzip-compressed or plain: it starts with {} bytes [{}], expected "
          "00 00 08 <number of dimensions>",
          path_, got, hex_bytes(magic.data(), got)));
    }
    if (magic[2] != kUnsignedByte) {
      throw InputError(
          fmt::format("{}: IDX type code 0x{:02x} ({}) is not supported; expected "
                      "0x08 (unsigned byte)",
                      path_, magic[2], type_name(magic[2])));
    }
    const int ndims = magic[3];
    if (ndims == 0) throw InputError(fmt::format("{}: IDX header has 0 dimensions", path_));
    std::vector<uint8_t> sizes(4 * static_cast<size_t>(ndims));
    const int64_t size_bytes = read_some(sizes.data(), std::ssize(sizes));
    if (size_bytes < std::ssize(sizes)) {
      throw InputError(fmt::format(
          "{}: IDX header truncated: {} dimensions need {} bytes of sizes but the file holds "
          "only {}",
          path_, ndims, sizes.size(), size_bytes));
    }
    for (int i = 0; i < ndims; ++i) {
      const uint8_t* b = &sizes[4 * static_cast<size_t>(i)];
      header_.dims.push_back(int64_t{b[0]} << 24 | int64_t{b[1]} << 16 | int64_t{b[2]} << 8 | b[3]);
    }
    const std::string what =
        fmt::format("{}: data size of dimensions {}", path_, dims_string(header_.dims));
    data_bytes_ = 1;
    for (int i = 0; i < ndims; ++i) {
      if (header_.dims[i] == 0) {
        throw InputError(
            fmt::format("{}: IDX dimension {} of {} is 0", path_, i, dims_string(header_.dims)));
      }
      data_bytes_ = checked_mul(data_bytes_, header_.dims[i], what);
    }
    check_fits_file(4 + 4 * int64_t{ndims});
  }

  // Refuses a header whose data cannot be in the file, before anything is sized by it: a plain
  // file must hold it after the header; a gzip file can hold at most 1032 bytes per byte of its
  // own (deflate's largest ratio, zlib's FAQ). A header alone thus never makes a reader allocate
  // more than that. Files of unknown size (pipes) are read as they come.
  void check_fits_file(int64_t header_bytes) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path_, ec)) return;
    const auto file_bytes = static_cast<int64_t>(std::filesystem::file_size(path_, ec));
    if (ec) return;
    if (gzdirect(f_.get()) == 1) {
      if (file_bytes - header_bytes < data_bytes_) {
        throw InputError(fmt::format(
            "{}: data truncated: dimensions {} need {} bytes of data but the file holds only {}",
            path_, dims_string(header_.dims), data_bytes_, file_bytes - header_bytes));
      }
    } else if (data_bytes_ > checked_mul(file_bytes, kDeflateMaxRatio, path_) - header_bytes) {
      throw InputError(fmt::format(
          "{}: data truncated: dimensions {} need {} bytes of data, more than a gzip file of {} "
          "bytes can hold (at most {} per byte)",
          path_, dims_string(header_.dims), data_bytes_, file_bytes, kDeflateMaxRatio));
    }
  }

  std::string path_;
  GzFile f_;
  IdxHeader header_;
  int64_t data_bytes_ = 0;  // prod(dims)
  int64_t data_read_ = 0;   // bytes of data read or skipped so far
};

// Opens path and checks that its header has `ndims` dimensions; `layout` names them.
IdxReader open_with_dims(const std::string& path, size_t ndims, std::string_view kind,
                         std::string_view layout) {
  IdxReader r(path);
  const auto& dims = r.header().dims;
  if (dims.size() != ndims) {
    throw InputError(fmt::format("{}: an IDX {} file has {} dimension{} {} but this one has {} {}",
                                 path, kind, ndims, ndims == 1 ? "" : "s", layout, dims.size(),
                                 dims_string(dims)));
  }
  return r;
}

IdxReader open_images(const std::string& path) {
  return open_with_dims(path, 3, "image", "(count, rows, cols)");
}

IdxReader open_labels(const std::string& path) {
  return open_with_dims(path, 1, "label", "(count)");
}

// The sample count of a set after checking that its two files agree.
int64_t matched_count(const std::string& images, const std::string& labels) {
  const int64_t n_images = open_images(images).header().dims[0];
  const int64_t n_labels = open_labels(labels).header().dims[0];
  if (n_images != n_labels) {
    throw InputError(
        fmt::format("{}: {} images but {} has {} labels", images, n_images, labels, n_labels));
  }
  return n_images;
}

}  // namespace

IdxHeader read_idx_header(const std::string& path) { return IdxReader(path).header(); }

int64_t idx_count(const std::string& path) { return read_idx_header(path).dims[0]; }

ImageSet read_idx_images(const std::string& path, Range samples) {
  IdxReader r = open_images(path);
  r.check_range(samples);
  const auto& dims = r.header().dims;
  ImageSet set{samples.size(), dims[1], dims[2], {}};
  const int64_t image_bytes = dims[1] * dims[2];  // within the checked product of dims
  r.skip(samples.begin * image_bytes);
  r.read_append(set.pixels, samples.size() * image_bytes, samples.size() * image_bytes);
  return set;
}

ImageSet read_idx_images_at(const std::string& path, std::span<const int64_t> samples) {
  IdxReader r = open_images(path);
  const auto& dims = r.header().dims;
  ImageSet set{std::ssize(samples), dims[1], dims[2], {}};
  const int64_t image_bytes = dims[1] * dims[2];
  // Increasing samples within the file: at most dims[0] of them, within the checked product.
  const int64_t final_bytes = std::min(set.count, dims[0]) * image_bytes;
  int64_t at = 0;  // the next sample of the file
  for (size_t i = 0; i < samples.size(); ++i) {
    const int64_t s = samples[i];
    if (i > 0 && s <= samples[i - 1]) {
      throw Error(fmt::format("read_idx_images_at: sample {} after {}: not increasing", s, samples[i - 1]));
    }
    r.check_range(Range{s, s + 1});
    r.skip((s - at) * image_bytes);
    r.read_append(set.pixels, image_bytes, final_bytes);
    at = s + 1;
  }
  return set;
}

std::vector<uint8_t> read_idx_labels(const std::string& path, Range samples) {
  IdxReader r = open_labels(path);
  r.check_range(samples);
  std::vector<uint8_t> labels;
  r.skip(samples.begin);
  r.read_append(labels, samples.size(), samples.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] >= kClasses) {
      throw InputError(fmt::format("{}: label {} of sample {} is not a class 0-{}", path, labels[i],
                                   samples.begin + static_cast<int64_t>(i), kClasses - 1));
    }
  }
  return labels;
}

void normalise_images(const ImageSet& images, float mean, float std, float* out) {
  if (!(std > 0.0f) || !std::isfinite(std)) {
    throw InputError(fmt::format("normalise_images: std {} is not positive and finite", std));
  }
  for (size_t i = 0; i < images.pixels.size(); ++i) {
    out[i] = (static_cast<float>(images.pixels[i]) / 255.0f - mean) / std;
  }
}

int64_t FashionMnist::train_count() const { return matched_count(train_images(), train_labels()); }

int64_t FashionMnist::test_count() const { return matched_count(test_images(), test_labels()); }

}  // namespace convgrid
