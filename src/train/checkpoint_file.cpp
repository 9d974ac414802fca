// Encoding and strict decoding of checkpoint files (see checkpoint_file.hpp). Every header value
// is checked for its JSON type and range before it is converted, so no double is cast to an
// integer and no counter is negative; the tensors must lie one after the other and fill the
// data exactly, so nothing is allocated beyond what the file holds.
#include "train/checkpoint_file.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "convgrid/error.hpp"
#include "io/strict_json.hpp"

namespace convgrid {
namespace {

using Json = nlohmann::json;

constexpr char kMagic[8] = {'C', 'V', 'G', 'C', 'K', 'P', 'T', '1'};
constexpr size_t kHeaderAt = sizeof kMagic + 8;  // after the magic and the header length
constexpr size_t kCrcBytes = 4;

InputError corrupt(const std::string& path, std::string_view why) {
  return InputError(fmt::format("checkpoint {} is corrupt: {}", path, why));
}

uint32_t crc_of(std::string_view bytes) {
  return static_cast<uint32_t>(
      crc32_z(0L, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

// A value as the file spells it, cut short when long.
std::string shown(const Json& value) {
  std::string s = value.dump();
  return s.size() <= 40 ? s : s.substr(0, 37) + "...";
}

// Checks the magic, the CRC-32 and the header length of a whole file; returns where the data
// starts (after the magic, the header length and the header).
size_t checked_data_start(std::string_view bytes, const std::string& path) {
  if (bytes.size() < sizeof kMagic || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw corrupt(path, "it does not start with CVGCKPT1");
  }
  if (bytes.size() < kHeaderAt + kCrcBytes) {
    throw corrupt(path, fmt::format("it has {} bytes, fewer than the {} of magic, header length "
                                    "and checksum",
                                    bytes.size(), kHeaderAt + kCrcBytes));
  }
  uint32_t stored = 0;
  std::memcpy(&stored, bytes.data() + bytes.size() - kCrcBytes, kCrcBytes);
  const uint32_t crc = crc_of(bytes.substr(0, bytes.size() - kCrcBytes));
  if (crc != stored) {
    throw corrupt(path, fmt::format("CRC-32 {:08x} but the file says {:08x}", crc, stored));
  }
  uint64_t length = 0;
  std::memcpy(&length, bytes.data() + sizeof kMagic, 8);
  if (length > bytes.size() - kHeaderAt - kCrcBytes) {
    throw corrupt(path, fmt::format("header length {} goes beyond the {} bytes of the file", length,
                                    bytes.size()));
  }
  return kHeaderAt + static_cast<size_t>(length);
}

// The value of `key` in the object j; `where` names j ("header", "tensor 3").
const Json& field(const Json& j, const char* key, std::string_view where, const std::string& path) {
  auto it = j.find(key);
  if (it == j.end()) throw corrupt(path, fmt::format("{} has no key \"{}\"", where, key));
  return *it;
}

// v as a whole number in [0, 2^63), or none. nlohmann keeps a JSON integer >= 0 as unsigned; a
// negative one, a fraction or an exponent is none here, so no double is ever cast to an integer.
std::optional<int64_t> whole_number(const Json& v) {
  if (!v.is_number_unsigned() ||
      v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::nullopt;
  }
  return static_cast<int64_t>(v.get<uint64_t>());
}

int64_t count_field(const Json& j, const char* key, std::string_view where,
                    const std::string& path) {
  const Json& v = field(j, key, where, path);
  const std::optional<int64_t> n = whole_number(v);
  if (!n) {
    throw corrupt(path, fmt::format("{} key \"{}\" must be a whole number in [0, 2^63), not {}",
                                    where, key, shown(v)));
  }
  return *n;
}

// prod(shape), or -1 when it overflows 64 bits.
int64_t volume_of(const std::vector<int64_t>& shape) {
  if (std::ranges::find(shape, 0) != shape.end()) return 0;
  int64_t v = 1;
  for (int64_t e : shape) {
    if (__builtin_mul_overflow(v, e, &v)) return -1;
  }
  return v;
}

std::string string_field(const Json& j, const char* key, std::string_view where,
                         const std::string& path) {
  const Json& v = field(j, key, where, path);
  if (!v.is_string()) {
    throw corrupt(path,
                  fmt::format("{} key \"{}\" must be a string, not {}", where, key, shown(v)));
  }
  return v.get<std::string>();
}

// The state fields of a header, each checked for its type and range.
TrainState state_from_header(const Json& h, const std::string& path) {
  const char* const where = "header";
  TrainState s;
  s.network = string_field(h, "network", where, path);
  s.batch = count_field(h, "batch", where, path);
  const Json& seed = field(h, "seed", where, path);
  if (!seed.is_number_unsigned()) {
    throw corrupt(path, fmt::format("header key \"seed\" must be a whole number in [0, 2^64), "
                                    "not {}",
                                    shown(seed)));
  }
  s.seed = seed.get<uint64_t>();
  s.epoch = count_field(h, "epoch", where, path);
  s.batch_in_epoch = count_field(h, "batch_in_epoch", where, path);
  s.step = count_field(h, "step", where, path);
  const Json& loss = field(h, "epoch_loss_sum", where, path);
  if (!loss.is_number() || !std::isfinite(loss.get<double>())) {
    throw corrupt(path, fmt::format("header key \"epoch_loss_sum\" must be a finite number, not {}",
                                    shown(loss)));
  }
  s.epoch_loss_sum = loss.get<double>();
  s.epoch_correct = count_field(h, "epoch_correct", where, path);
  s.epoch_samples = count_field(h, "epoch_samples", where, path);
  if (h.contains("recipe")) {
    const Json& recipe = h["recipe"];
    if (!recipe.is_object()) {
      throw corrupt(path, fmt::format("header key \"recipe\" must be an object, not {}",
                                      shown(recipe)));
    }
    for (const auto& [key, value] : recipe.items()) {
      if (!value.is_string()) {
        throw corrupt(path, fmt::format("recipe key \"{}\" must be a string, not {}", key,
                                        shown(value)));
      }
      s.recipe.emplace(key, value.get<std::string>());
    }
  }
  if (s.batch < 1) throw corrupt(path, "header key \"batch\" is 0");
  if (s.epoch_correct > s.epoch_samples) {
    throw corrupt(path, fmt::format("epoch_correct {} is more than epoch_samples {}",
                                    s.epoch_correct, s.epoch_samples));
  }
  if (s.batch_in_epoch > s.step) {
    throw corrupt(path,
                  fmt::format("batch_in_epoch {} is more than step {}", s.batch_in_epoch, s.step));
  }
  return s;
}

// Entry `index` of the header's tensor list with its values from `data` (`floats` of them),
// after checking that it has 4 extents whose product is its count and that it starts at `at`,
// where the tensor before it ends, and lies within the data.
CheckpointTensor tensor_from_entry(const Json& t, size_t index, int64_t at, const char* data,
                                   int64_t floats, const std::string& path) {
  const std::string where = fmt::format("tensor {}", index);
  if (!t.is_object())
    throw corrupt(path, fmt::format("{} is not an object but {}", where, shown(t)));
  CheckpointTensor tensor{string_field(t, "name", where, path), {}, {}};
  const Json& shape = field(t, "shape", where, path);
  if (!shape.is_array() || shape.size() != 4) {
    throw corrupt(path, fmt::format("{} ({}) key \"shape\" must be 4 extents, not {}", where,
                                    tensor.name, shown(shape)));
  }
  for (const Json& d : shape) {
    const std::optional<int64_t> e = whole_number(d);
    if (!e) {
      throw corrupt(path, fmt::format("{} ({}) has the extent {}: not a whole number in [0, 2^63)",
                                      where, tensor.name, shown(d)));
    }
    tensor.shape.push_back(*e);
  }
  const int64_t volume = volume_of(tensor.shape);
  const int64_t offset = count_field(t, "offset", where, path);
  const int64_t count = count_field(t, "count", where, path);
  if (count != volume || offset != at || count > floats - offset) {
    throw corrupt(path, fmt::format("tensor {} ({}) of shape {} at offset {} with {} values does "
                                    "not fit the {} floats of data from offset {}",
                                    index, tensor.name, shown(shape), offset, count, floats, at));
  }
  tensor.values.resize(static_cast<size_t>(count));
  if (count > 0) {  // an empty tensor's vector has no storage: memcpy may not be given null
    std::memcpy(tensor.values.data(), data + offset * static_cast<int64_t>(sizeof(float)),
                static_cast<size_t>(count) * sizeof(float));
  }
  return tensor;
}

}  // namespace

std::string checkpoint_bytes(const CheckpointFile& file) {
  const TrainState& s = file.state;
  Json header = {{"network", s.network},
                 {"batch", s.batch},
                 {"seed", s.seed},
                 {"epoch", s.epoch},
                 {"batch_in_epoch", s.batch_in_epoch},
                 {"step", s.step},
                 {"epoch_loss_sum", s.epoch_loss_sum},
                 {"epoch_correct", s.epoch_correct},
                 {"epoch_samples", s.epoch_samples}};
  if (!s.recipe.empty()) header["recipe"] = s.recipe;
  Json list = Json::array();
  int64_t offset = 0;
  for (const CheckpointTensor& t : file.tensors) {
    const auto count = static_cast<int64_t>(t.values.size());
    list.push_back({{"name", t.name}, {"shape", t.shape}, {"offset", offset}, {"count", count}});
    offset += count;
  }
  header["tensors"] = list;
  const std::string text = header.dump();
  const uint64_t length = text.size();
  std::string bytes(kMagic, sizeof kMagic);
  bytes.append(reinterpret_cast<const char*>(&length), sizeof length);
  bytes += text;
  for (const CheckpointTensor& t : file.tensors) {
    bytes.append(reinterpret_cast<const char*>(t.values.data()), t.values.size() * sizeof(float));
  }
  const uint32_t crc = crc_of(bytes);
  bytes.append(reinterpret_cast<const char*>(&crc), sizeof crc);
  return bytes;
}

CheckpointFile parse_checkpoint(std::string_view bytes, const std::string& path) {
  const size_t data_at = checked_data_start(bytes, path);
  const size_t data_bytes = bytes.size() - kCrcBytes - data_at;
  if (data_bytes % sizeof(float) != 0) {
    throw corrupt(path,
                  fmt::format("its {} bytes of data are not a whole number of floats", data_bytes));
  }
  const auto floats = static_cast<int64_t>(data_bytes / sizeof(float));
  const Json h = parse_json(bytes.substr(kHeaderAt, data_at - kHeaderAt),
                            fmt::format("checkpoint {} is corrupt: header", path));
  if (!h.is_object()) throw corrupt(path, fmt::format("the header is {}, not an object", shown(h)));
  CheckpointFile file;
  file.state = state_from_header(h, path);
  const Json& list = field(h, "tensors", "header", path);
  if (!list.is_array()) {
    throw corrupt(path, fmt::format("header key \"tensors\" must be a list, not {}", shown(list)));
  }
  int64_t at = 0;  // where the next tensor starts, in floats
  for (size_t i = 0; i < list.size(); ++i) {
    file.tensors.push_back(tensor_from_entry(list[i], i, at, bytes.data() + data_at, floats, path));
    at += std::ssize(file.tensors.back().values);
  }
  if (at != floats) {
    throw corrupt(path, fmt::format("its tensors hold {} floats but its data {}", at, floats));
  }
  return file;
}

CheckpointFile read_checkpoint_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open for reading", path));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(fmt::format("{}: read error", path));
  return parse_checkpoint(bytes, path);
}

}  // namespace convgrid
