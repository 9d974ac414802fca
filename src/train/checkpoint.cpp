// Checkpoints (see checkpoint.hpp): gathered to rank 0 in the global layout, written atomically,
// checked on reading (magic, header, sizes, CRC-32, and that they belong to this run).
#include "train/checkpoint.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "comm/mpi_error.hpp"
#include "convgrid/error.hpp"

namespace convgrid {
namespace {

constexpr char kMagic[8] = {'C', 'V', 'G', 'C', 'K', 'P', 'T', '1'};
namespace fs = std::filesystem;

// The whole tensor on rank 0 from every rank's slice of it (rank 0's copy when replicated).
std::vector<float> gather_global(const Communicator& world, const ParamShard& p,
                                 const float* mine) {
  const int P = world.size(), me = world.rank();
  std::vector<float> global;
  if (me == 0) global.assign(p.global.volume(), 0.0f);
  const auto place = [&](const Slice& s, const float* data) {
    for_each_run(s, [&](int64_t a, int64_t b, int64_t c, int64_t d0, int64_t d1, int64_t off) {
      std::copy(data + off, data + off + (d1 - d0), global.data() + p.global.offset(a, b, c, d0));
    });
  };
  if (p.replicated || P == 1) {
    if (me == 0) place(p.slice, mine);
    return global;
  }
  // Each rank's slice: the box's 8 bounds and the flat range.
  int64_t desc[10];
  for (int d = 0; d < 4; ++d) {
    desc[2 * d] = p.slice.box.r[d].begin;
    desc[2 * d + 1] = p.slice.box.r[d].end;
  }
  desc[8] = p.slice.flat.begin;
  desc[9] = p.slice.flat.end;
  std::vector<int64_t> all(me == 0 ? 10 * P : 0);
  check_mpi(MPI_Gather(desc, 10, MPI_INT64_T, all.data(), 10, MPI_INT64_T, 0, world.raw()),
            "MPI_Gather");
  std::vector<int> counts(P), displs(P);
  std::vector<Slice> slices(P);
  if (me == 0) {
    int total = 0;
    for (int r = 0; r < P; ++r) {
      const int64_t* x = &all[10 * r];
      slices[r] =
          Slice{Box4{{Range{x[0], x[1]}, Range{x[2], x[3]}, Range{x[4], x[5]}, Range{x[6], x[7]}}},
                Range{x[8], x[9]}};
      counts[r] = static_cast<int>(slices[r].size());
      displs[r] = total;
      total += counts[r];
    }
  }
  std::vector<float> recv(me == 0 ? static_cast<size_t>(displs[P - 1] + counts[P - 1]) : 0);
  check_mpi(MPI_Gatherv(mine, static_cast<int>(p.slice.size()), MPI_FLOAT, recv.data(),
                        counts.data(), displs.data(), MPI_FLOAT, 0, world.raw()),
            "MPI_Gatherv");
  if (me == 0) {
    for (int r = 0; r < P; ++r) place(slices[r], recv.data() + displs[r]);
  }
  return global;
}

std::vector<int64_t> extents(const Box4& b) {
  return {b.extent(0), b.extent(1), b.extent(2), b.extent(3)};
}

void write_all(int fd, const void* data, size_t n, const std::string& path) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw InputError(fmt::format("{}: write failed: {}", path, std::strerror(errno)));
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

InputError corrupt(const std::string& path, const std::string& why) {
  return InputError(fmt::format("checkpoint {} is corrupt: {}", path, why));
}

// Checks the magic, the CRC-32 and the header length of a whole file; returns where the data
// starts (after the magic, the header length and the header).
size_t checked_data_start(const std::string& bytes, const std::string& path) {
  if (bytes.size() < sizeof kMagic + 8 + 4 ||
      std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) {
    throw corrupt(path, "it does not start with CVGCKPT1");
  }
  uint32_t stored = 0;
  std::memcpy(&stored, bytes.data() + bytes.size() - 4, 4);
  const uint32_t crc = static_cast<uint32_t>(
      crc32_z(0L, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size() - 4));
  if (crc != stored) {
    throw corrupt(path, fmt::format("CRC-32 {:08x} but the file says {:08x}", crc, stored));
  }
  uint64_t length = 0;
  std::memcpy(&length, bytes.data() + sizeof kMagic, 8);
  const size_t data_at = sizeof kMagic + 8 + length;
  if (length > bytes.size() || data_at > bytes.size() - 4) {
    throw corrupt(path, "header length out of range");
  }
  return data_at;
}

// The state fields of a header (nlohmann::json::exception when one is missing or mistyped).
TrainState state_from_header(const nlohmann::json& h) {
  TrainState s;
  s.network = h.at("network").get<std::string>();
  s.batch = h.at("batch").get<int64_t>();
  s.seed = h.at("seed").get<uint64_t>();
  s.epoch = h.at("epoch").get<int64_t>();
  s.batch_in_epoch = h.at("batch_in_epoch").get<int64_t>();
  s.step = h.at("step").get<int64_t>();
  s.epoch_loss_sum = h.at("epoch_loss_sum").get<double>();
  s.epoch_correct = h.at("epoch_correct").get<int64_t>();
  s.epoch_samples = h.at("epoch_samples").get<int64_t>();
  return s;
}

// Entry `index` of the header's tensor list with its values from `data` (`floats` of them),
// after checking that it has 4 extents whose product is its count and lies within the data.
CheckpointTensor tensor_from_entry(const nlohmann::json& t, size_t index, const char* data,
                                   int64_t floats, const std::string& path) {
  CheckpointTensor tensor{t.at("name").get<std::string>(),
                          t.at("shape").get<std::vector<int64_t>>(), {}};
  const int64_t offset = t.at("offset").get<int64_t>(), count = t.at("count").get<int64_t>();
  int64_t volume = 1;
  bool sane = tensor.shape.size() == 4;
  for (int64_t d : tensor.shape) {
    sane = sane && d >= 0 && (d == 0 || volume <= floats / d);
    if (sane) volume *= d;
  }
  if (!sane || count != volume || offset < 0 || offset > floats || count > floats - offset) {
    throw corrupt(path, fmt::format("tensor {} ({}) of shape {} at offset {} with {} values does "
                                    "not fit the {} floats of data",
                                    index, tensor.name, t.at("shape").dump(), offset, count,
                                    floats));
  }
  tensor.values.resize(static_cast<size_t>(count));
  std::memcpy(tensor.values.data(), data + offset * sizeof(float),
              static_cast<size_t>(count) * sizeof(float));
  return tensor;
}

// The tensors of a checkpoint in file order: every parameter then its momentum, then every state
// tensor (batch-norm running statistics), each with the storage it is read from or written to.
struct Entry {
  const ParamShard* shard;
  std::string name;
  float* data;
};

std::vector<Entry> entries(const std::vector<ParamShard>& params,
                           const std::vector<TrackedVector<float>>& momentum,
                           const std::vector<ParamShard>& state) {
  std::vector<Entry> out;
  for (size_t i = 0; i < params.size(); ++i) {
    out.push_back({&params[i], params[i].name, params[i].value.data()});
    out.push_back({&params[i], params[i].name + ".momentum", const_cast<float*>(momentum[i].data())});
  }
  for (const ParamShard& p : state) out.push_back({&p, p.name, p.value.data()});
  return out;
}

}  // namespace

std::string checkpoint_path(const std::string& dir, int64_t step) {
  return (fs::path(dir) / fmt::format("step-{:08d}.ckpt", step)).string();
}

std::string write_checkpoint(const Communicator& world, const std::string& dir,
                             const TrainState& state, const std::vector<ParamShard>& params,
                             const std::vector<TrackedVector<float>>& momentum,
                             const std::vector<ParamShard>& state_tensors) {
  const std::string path = checkpoint_path(dir, state.step);
  std::vector<std::vector<float>> tensors;
  nlohmann::json header = {{"network", state.network},
                           {"batch", state.batch},
                           {"seed", state.seed},
                           {"epoch", state.epoch},
                           {"batch_in_epoch", state.batch_in_epoch},
                           {"step", state.step},
                           {"epoch_loss_sum", state.epoch_loss_sum},
                           {"epoch_correct", state.epoch_correct},
                           {"epoch_samples", state.epoch_samples}};
  nlohmann::json list = nlohmann::json::array();
  int64_t offset = 0;
  for (const Entry& e : entries(params, momentum, state_tensors)) {
    tensors.push_back(gather_global(world, *e.shard, e.data));
    const int64_t count = e.shard->global.volume();
    list.push_back({{"name", e.name}, {"shape", extents(e.shard->global)}, {"offset", offset}, {"count", count}});
    offset += count;
  }
  header["tensors"] = list;
  int ok = 1;
  std::string error;
  if (world.rank() == 0) {
    try {
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec)
        throw InputError(fmt::format("--checkpoint-dir {}: cannot create: {}", dir, ec.message()));
      const std::string text = header.dump();
      const uint64_t length = text.size();
      std::string bytes(kMagic, sizeof kMagic);
      bytes.append(reinterpret_cast<const char*>(&length), sizeof length);
      bytes += text;
      for (const auto& t : tensors) {
        bytes.append(reinterpret_cast<const char*>(t.data()), t.size() * sizeof(float));
      }
      const uint32_t crc = static_cast<uint32_t>(
          crc32_z(0L, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
      bytes.append(reinterpret_cast<const char*>(&crc), sizeof crc);
      const std::string tmp =
          (fs::path(dir) / fmt::format(".step-{:08d}.ckpt.tmp", state.step)).string();
      const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) throw InputError(fmt::format("{}: cannot create: {}", tmp, std::strerror(errno)));
      write_all(fd, bytes.data(), bytes.size(), tmp);
      if (::fsync(fd) != 0 || ::close(fd) != 0) {
        throw InputError(fmt::format("{}: fsync failed: {}", tmp, std::strerror(errno)));
      }
      fs::rename(tmp, path);
      const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
      if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
      }
    } catch (const std::exception& e) {
      ok = 0;
      error = e.what();
    }
  }
  check_mpi(MPI_Bcast(&ok, 1, MPI_INT, 0, world.raw()), "MPI_Bcast");
  if (!ok) throw InputError(world.rank() == 0 ? error : "rank 0 could not write the checkpoint");
  return path;
}

CheckpointFile read_checkpoint_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open for reading", path));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t data_at = checked_data_start(bytes, path);
  const size_t header_at = sizeof kMagic + 8;
  const int64_t floats = static_cast<int64_t>((bytes.size() - 4 - data_at) / sizeof(float));
  CheckpointFile file;
  try {
    const nlohmann::json h = nlohmann::json::parse(bytes.substr(header_at, data_at - header_at));
    file.state = state_from_header(h);
    if (!h.contains("tensors") || !h["tensors"].is_array()) throw corrupt(path, "no tensor list");
    const auto& list = h["tensors"];
    for (size_t i = 0; i < list.size(); ++i) {
      file.tensors.push_back(tensor_from_entry(list[i], i, bytes.data() + data_at, floats, path));
    }
  } catch (const nlohmann::json::exception& e) {
    throw corrupt(path, fmt::format("bad header: {}", e.what()));
  }
  return file;
}

TrainState read_checkpoint(const std::string& path, const TrainState& expected,
                           std::vector<ParamShard>& params,
                           std::vector<TrackedVector<float>>& momentum,
                           std::vector<ParamShard>& state_tensors) {
  const CheckpointFile file = read_checkpoint_file(path);
  const TrainState& s = file.state;
  if (s.network != expected.network || s.batch != expected.batch || s.seed != expected.seed) {
    throw InputError(fmt::format(
        "checkpoint {} is for network {} batch {} seed {}, this run is {} batch {} "
        "seed {}",
        path, s.network, s.batch, s.seed, expected.network, expected.batch, expected.seed));
  }
  const auto& list = file.tensors;
  const std::vector<Entry> want = entries(params, momentum, state_tensors);
  if (list.size() != want.size()) {
    throw InputError(fmt::format("checkpoint {} holds {} tensors, the network has {}", path,
                                 list.size(), want.size()));
  }
  // Every tensor is checked before any is loaded, so a refused file changes nothing.
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].name != want[i].name || list[i].shape != extents(want[i].shard->global)) {
      throw InputError(fmt::format("checkpoint {}: tensor {} ({}) does not match {} of the network",
                                   path, i, list[i].name, want[i].name));
    }
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const ParamShard& p = *want[i].shard;
    const float* base = list[i].values.data();
    float* dst = want[i].data;
    for_each_run(p.slice,
                 [&](int64_t a, int64_t b, int64_t c, int64_t d0, int64_t d1, int64_t off) {
                   std::memcpy(dst + off, base + p.global.offset(a, b, c, d0),
                               (d1 - d0) * sizeof(float));
                 });
  }
  return s;
}

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() == 18 && name.rfind("step-", 0) == 0 && name.ends_with(".ckpt")) {
      const std::string digits = name.substr(5, 8);
      if (std::all_of(digits.begin(), digits.end(), ::isdigit))
        found.emplace_back(std::stoll(digits), e.path().string());
    }
  }
  std::sort(found.rbegin(), found.rend());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

}  // namespace convgrid
