// Reading and writing float32 .npy files: the preamble, a strict parser for the header's Python
// dict literal, and whole-file reads and writes.
#include "convgrid/npy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <utility>

#include "convgrid/checked.hpp"
#include "convgrid/error.hpp"

namespace convgrid {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the data of '<f4' files is copied as is, which needs a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kAlign = 64;
// numpy leaves room for shape[0] to grow to this many digits, so a header can be rewritten in
// place when an array grows; copied so that our files are byte-identical to np.save's.
constexpr size_t kGrowthAxisMaxDigits = 21;

// ---- The header dict --------------------------------------------------------------------------

// A value numpy writes in a header: a string, True/False, or a tuple of integers.
struct DictValue {
  enum class Kind { kString, kBool, kTuple } kind = Kind::kString;
  std::string text;
  bool flag = false;
  std::vector<int64_t> ints;
};

// Recursive descent over exactly the literals numpy writes: {'key': value, ...} with string keys,
// single or double quotes (no escapes, no control characters), True/False, tuples of decimal
// integers, any whitespace, optional trailing commas. Anything else fails with the offset where
// it went wrong.
class DictParser {
 public:
  DictParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  std::map<std::string, DictValue> parse() {
    std::map<std::string, DictValue> dict;
    skip_ws();
    expect('{');
    while (!eat('}')) {
      const size_t key_at = pos_;
      std::string key = parse_string();
      expect(':');
      if (!dict.emplace(key, parse_value()).second) {
        fail_at(key_at, fmt::format("key '{}' appears twice", key));
      }
      if (!eat(',')) {
        expect('}');
        break;
      }
    }
    if (pos_ != text_.size()) fail("text after the closing '}'");
    return dict;
  }

 private:
  [[noreturn]] void fail_at(size_t at, std::string_view what) const {
    throw InputError(fmt::format("{}: .npy header is not a Python dict literal: {} at offset {}",
                                 path_, what, at));
  }
  [[noreturn]] void fail(std::string_view what) const { fail_at(pos_, what); }

  // Skips whitespace, then reports whether the next character is c (and consumes it if so).
  bool eat(char c) {
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      skip_ws();
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(fmt::format("expected '{}'", c));
  }
  void skip_ws() {
    while (pos_ < text_.size() && std::strchr(" \t\r\n", text_[pos_]) != nullptr) ++pos_;
  }
  bool at_end() const { return pos_ >= text_.size(); }

  std::string parse_string() {
    if (at_end() || (text_[pos_] != '\'' && text_[pos_] != '"')) fail("expected a quoted string");
    const char quote = text_[pos_++];
    const size_t begin = pos_;
    while (!at_end() && text_[pos_] != quote) {
      const auto c = static_cast<unsigned char>(text_[pos_]);
      // Errors quote strings, so none may hold a control character (a newline, say).
      if (c == '\\' || c < 0x20 || c == 0x7f) fail("escape or control character in a string");
      ++pos_;
    }
    if (at_end()) fail("unterminated string");
    return std::string(text_.substr(begin, pos_++ - begin));
  }

  DictValue parse_value() {
    DictValue v;
    if (at_end()) fail("expected a value");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') {
      v.text = parse_string();
    } else if (c == '(') {
      v.kind = DictValue::Kind::kTuple;
      v.ints = parse_tuple();
    } else if (text_.substr(pos_, 4) == "True" || text_.substr(pos_, 5) == "False") {
      v.kind = DictValue::Kind::kBool;
      v.flag = c == 'T';
      pos_ += v.flag ? 4 : 5;
    } else {
      fail("expected a string, True, False or a tuple");
    }
    skip_ws();
    return v;
  }

  // (), (5,), (2, 3) or (2, 3,). A lone (5) is the integer 5 in Python, not a tuple.
  std::vector<int64_t> parse_tuple() {
    const size_t open_at = pos_;
    std::vector<int64_t> ints;
    expect('(');
    bool comma = false;
    while (!eat(')')) {
      ints.push_back(parse_int());
      skip_ws();
      comma = eat(',');
      if (!comma) {
        expect(')');
        break;
      }
    }
    if (ints.size() == 1 && !comma) {
      fail_at(open_at,
              fmt::format("({}) is not a tuple (a 1-tuple is written ({},))", ints[0], ints[0]));
    }
    return ints;
  }

  // A decimal integer as Python writes it: an optional '-', no leading zeros, no '_'.
  int64_t parse_int() {
    const size_t begin = pos_;
    if (!at_end() && text_[pos_] == '-') ++pos_;
    const size_t digits = pos_;
    while (!at_end() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    if (pos_ == digits) fail("expected an integer");
    if (text_[digits] == '0' && pos_ - digits > 1) fail_at(begin, "integer with a leading zero");
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text_.data() + begin, text_.data() + pos_, v);
    if (ec != std::errc()) {
      fail_at(begin,
              fmt::format("integer {} does not fit in 64 bits", text_.substr(begin, pos_ - begin)));
    }
    return v;
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

// Checks the keys and values of a parsed header and returns its shape.
std::vector<int64_t> shape_from_dict(const std::map<std::string, DictValue>& dict,
                                     const std::string& path) {
  for (auto& [key, value] : dict) {
    if (key != "descr" && key != "fortran_order" && key != "shape") {
      throw InputError(fmt::format(
          "{}: .npy header has the unexpected key '{}' (expected descr, fortran_order, shape)",
          path, key));
    }
  }
  auto get = [&](const char* key, DictValue::Kind kind, const char* type) -> const DictValue& {
    auto it = dict.find(key);
    if (it == dict.end()) {
      throw InputError(fmt::format("{}: .npy header has no '{}' key", path, key));
    }
    if (it->second.kind != kind) {
      throw InputError(fmt::format("{}: .npy header '{}' is not {}", path, key, type));
    }
    return it->second;
  };
  const std::string& descr = get("descr", DictValue::Kind::kString, "a string").text;
  if (descr != "<f4") {
    throw InputError(fmt::format(
        "{}: dtype '{}' is not supported (expected '<f4', little-endian float32)", path, descr));
  }
  if (get("fortran_order", DictValue::Kind::kBool, "True or False").flag) {
    throw InputError(
        fmt::format("{}: fortran_order is True; only C-order arrays are supported", path));
  }
  return get("shape", DictValue::Kind::kTuple, "a tuple of integers").ints;
}

// ---- Sizes and files --------------------------------------------------------------------------

// 4 * prod(shape), after checking that no extent is negative and nothing overflows.
int64_t data_bytes(const std::vector<int64_t>& shape, std::string_view where) {
  const std::string shape_text = npy_shape_string(shape);  // formatted once: shapes can be long
  const std::string count_what = fmt::format("{}: element count of shape {}", where, shape_text);
  int64_t elems = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      throw InputError(fmt::format("{}: shape {} has a negative extent", where, shape_text));
    }
    elems = checked_mul(elems, d, count_what);
  }
  return checked_mul(elems, 4, fmt::format("{}: byte count of shape {}", where, shape_text));
}

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

File open_file(const std::string& path, const char* mode, std::string_view purpose) {
  File f(std::fopen(path.c_str(), mode), &std::fclose);
  if (!f) {
    throw InputError(
        fmt::format("{}: cannot open for {}: {}", path, purpose, std::strerror(errno)));
  }
  return f;
}

std::string read_bytes(std::FILE* f, const std::string& path, size_t n) {
  std::string s(n, '\0');
  if (std::fread(s.data(), 1, n, f) != n) {
    throw InputError(fmt::format("{}: read error: {}", path, std::strerror(errno)));
  }
  return s;
}

uint32_t little_endian(std::string_view bytes) {
  uint32_t v = 0;
  for (size_t i = bytes.size(); i-- > 0;) v = v << 8 | static_cast<unsigned char>(bytes[i]);
  return v;
}

// Opens path for reading and returns it with its size in bytes.
std::pair<File, int64_t> open_for_reading(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(fmt::format("{}: cannot read: {}", path, ec.message()));
  return {open_file(path, "rb", "reading"), static_cast<int64_t>(size)};
}

// read_npy_header on an open file of `size` bytes, read from its start; leaves f at the data.
NpyHeader read_header(std::FILE* f, const std::string& path, int64_t size) {
  const std::string pre = read_bytes(f, path, static_cast<size_t>(std::min<int64_t>(size, 8)));
  if (!pre.starts_with(kMagic)) {
    throw InputError(fmt::format("{}: not a .npy file (it does not start with \\x93NUMPY)", path));
  }
  if (pre.size() < 8) {
    throw InputError(fmt::format("{}: .npy preamble truncated ({} bytes)", path, size));
  }
  const int major = static_cast<unsigned char>(pre[6]), minor = static_cast<unsigned char>(pre[7]);
  if (major < 1 || major > 3 || minor != 0) {
    throw InputError(
        fmt::format("{}: unsupported .npy format version {}.{} (1.0, 2.0 and 3.0 are read)", path,
                    major, minor));
  }
  const size_t len_bytes = major == 1 ? 2 : 4;
  if (static_cast<size_t>(size) < 8 + len_bytes) {
    throw InputError(fmt::format("{}: .npy preamble truncated ({} bytes)", path, size));
  }
  const int64_t header_len = little_endian(read_bytes(f, path, len_bytes));
  NpyHeader h;
  h.data_offset = static_cast<int64_t>(8 + len_bytes) + header_len;
  if (h.data_offset > size) {
    throw InputError(
        fmt::format("{}: .npy header length {} goes beyond the end of the file ({} bytes)", path,
                    header_len, size));
  }
  const std::string text = read_bytes(f, path, static_cast<size_t>(header_len));
  h.shape = shape_from_dict(DictParser(text, path).parse(), path);

  const int64_t expected =
      checked_add(h.data_offset, data_bytes(h.shape, path), fmt::format("{}: file size", path));
  if (size < expected) {
    throw InputError(fmt::format(
        "{}: data truncated: shape {} needs {} bytes after the header but the file holds {}", path,
        npy_shape_string(h.shape), expected - h.data_offset, size - h.data_offset));
  }
  if (size > expected) {
    throw InputError(fmt::format("{}: {} bytes of extra data after the {} bytes of shape {}", path,
                                 size - expected, expected - h.data_offset,
                                 npy_shape_string(h.shape)));
  }
  return h;
}

}  // namespace

int64_t NpyHeader::elems() const { return data_bytes(shape, "npy") / 4; }

std::string npy_shape_string(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

NpyHeader read_npy_header(const std::string& path) {
  auto [f, size] = open_for_reading(path);
  return read_header(f.get(), path, size);
}

void check_npy_shape(const std::string& path, const NpyHeader& header,
                     const std::vector<int64_t>& expected, std::string_view what) {
  if (header.shape != expected) {
    throw InputError(fmt::format("{}: shape {} does not match {} {}", path,
                                 npy_shape_string(header.shape), what, npy_shape_string(expected)));
  }
}

std::string npy_header_bytes(const std::vector<int64_t>& shape) {
  data_bytes(shape, "npy header");
  std::string dict = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': {}, }}",
                                 npy_shape_string(shape));
  if (!shape.empty()) dict.append(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');
  // Version 1.0 stores the header length in 2 bytes, 2.0 in 4. As in numpy, the padding is
  // 1 to 64 spaces, so that magic + version + length + header + '\n' is a multiple of 64.
  auto padding = [&](size_t len_bytes) {
    return kAlign - (8 + len_bytes + dict.size() + 1) % kAlign;
  };
  const size_t len_bytes = dict.size() + padding(2) + 1 <= 65535 ? 2 : 4;
  const size_t header_len = dict.size() + padding(len_bytes) + 1;
  std::string out(kMagic);
  out += static_cast<char>(len_bytes == 2 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < len_bytes; ++i) out += static_cast<char>(header_len >> (8 * i) & 0xff);
  out += dict;
  out.append(padding(len_bytes), ' ');
  out += '\n';
  return out;
}

NpyArray read_npy(const std::string& path, const std::vector<int64_t>* expected_shape) {
  auto [f, size] = open_for_reading(path);
  NpyHeader h = read_header(f.get(), path, size);
  if (expected_shape != nullptr) check_npy_shape(path, h, *expected_shape, "the expected shape");
  Buffer data(h.elems());
  NpyArray a{std::move(h.shape), std::move(data)};
  const auto bytes = static_cast<size_t>(a.data.bytes());
  if (bytes > 0 && std::fread(a.data.data(), 1, bytes, f.get()) != bytes) {
    throw InputError(fmt::format("{}: read error in the data: {}", path, std::strerror(errno)));
  }
  return a;
}

void write_npy(const std::string& path, const std::vector<int64_t>& shape, const float* data) {
  const size_t bytes = static_cast<size_t>(data_bytes(shape, path));
  const std::string header = npy_header_bytes(shape);
  File f = open_file(path, "wb", "writing");
  if (std::fwrite(header.data(), 1, header.size(), f.get()) != header.size() ||
      (bytes > 0 && std::fwrite(data, 1, bytes, f.get()) != bytes) ||
      std::fclose(f.release()) != 0) {
    throw InputError(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
  }
}

}  // namespace convgrid
