// Checkpoints (see checkpoint.hpp): gathered to rank 0 in the global layout, written atomically,
// checked on reading (the file by checkpoint_file.cpp, here that it belongs to this run).
#include "train/checkpoint.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "comm/mpi_error.hpp"
#include "convgrid/error.hpp"

namespace convgrid {
namespace {

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
  CheckpointFile file{state, {}};  // the tensors' values on rank 0 only
  for (const Entry& e : entries(params, momentum, state_tensors)) {
    file.tensors.push_back(
        {e.name, extents(e.shard->global), gather_global(world, *e.shard, e.data)});
  }
  int ok = 1;
  std::string error;
  if (world.rank() == 0) {
    const std::string tmp =
        (fs::path(dir) / fmt::format(".step-{:08d}.ckpt.tmp", state.step)).string();
    try {
      std::error_code ec;
      fs::create_directories(dir, ec);
      if (ec)
        throw InputError(fmt::format("--checkpoint-dir {}: cannot create: {}", dir, ec.message()));
      const std::string bytes = checkpoint_bytes(file);
      const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) throw InputError(fmt::format("{}: cannot create: {}", tmp, std::strerror(errno)));
      try {
        write_all(fd, bytes.data(), bytes.size(), tmp);
      } catch (...) {
        ::close(fd);
        throw;
      }
      // A full file system may only show at fsync or close (delayed allocation, NFS).
      if (::fsync(fd) != 0) {
        const int e = errno;
        ::close(fd);
        throw InputError(fmt::format("{}: fsync failed: {}", tmp, std::strerror(e)));
      }
      if (::close(fd) != 0)
        throw InputError(fmt::format("{}: close failed: {}", tmp, std::strerror(errno)));
      fs::rename(tmp, path);
      const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
      if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
      }
    } catch (const std::exception& e) {
      ok = 0;
      error = fmt::format("checkpoint {} not written: {}", path, e.what());
      ::unlink(tmp.c_str());  // the partial file would only take the space the next try needs
    }
  }
  check_mpi(MPI_Bcast(&ok, 1, MPI_INT, 0, world.raw()), "MPI_Bcast");
  if (!ok) throw InputError(world.rank() == 0 ? error : "rank 0 could not write the checkpoint");
  return path;
}

namespace {

// OtherRunCheckpoint naming the first option (in name order) whose value differs.
void check_same_recipe(const std::string& path, const std::map<std::string, std::string>& written,
                       const std::map<std::string, std::string>& run) {
  const auto value = [](const std::map<std::string, std::string>& m, const std::string& key) {
    const auto it = m.find(key);
    return it == m.end() ? std::string("(not set)") : it->second;
  };
  std::vector<std::string> keys;
  for (const auto& [key, v] : written) keys.push_back(key);
  for (const auto& [key, v] : run) {
    if (!written.contains(key)) keys.push_back(key);
  }
  std::ranges::sort(keys);
  for (const std::string& key : keys) {
    const std::string a = value(written, key), b = value(run, key);
    if (a == b) continue;
    throw OtherRunCheckpoint(fmt::format(
        "checkpoint {} was written with --{} {}, this run has --{} {}: resume with the options it "
        "was written with, or give another --checkpoint-dir",
        path, key, a, key, b));
  }
}

}  // namespace

TrainState read_checkpoint(const std::string& path, const TrainState& expected,
                           int64_t batches_per_epoch, std::vector<ParamShard>& params,
                           std::vector<TrackedVector<float>>& momentum,
                           std::vector<ParamShard>& state_tensors) {
  const CheckpointFile file = read_checkpoint_file(path);
  const TrainState& s = file.state;
  if (s.network != expected.network || s.batch != expected.batch || s.seed != expected.seed) {
    throw OtherRunCheckpoint(fmt::format(
        "checkpoint {} is for network {} batch {} seed {}, this run is {} batch {} "
        "seed {}",
        path, s.network, s.batch, s.seed, expected.network, expected.batch, expected.seed));
  }
  if (!s.recipe.empty()) check_same_recipe(path, s.recipe, expected.recipe);
  // A run resumes at batch_in_epoch and counts up to batches_per_epoch: beyond, it would never
  // end the epoch.
  if (s.batch_in_epoch >= batches_per_epoch) {
    throw InputError(fmt::format("checkpoint {} resumes at batch {} of an epoch but this run's "
                                 "epochs have {} batches",
                                 path, s.batch_in_epoch, batches_per_epoch));
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
    copy_shard_of_whole(p, list[i].values.data(), want[i].data);
  }
  return s;
}

void copy_shard_of_whole(const ParamShard& p, const float* whole, float* dst) {
  for_each_run(p.slice, [&](int64_t a, int64_t b, int64_t c, int64_t d0, int64_t d1, int64_t off) {
    std::memcpy(dst + off, whole + p.global.offset(a, b, c, d0), (d1 - d0) * sizeof(float));
  });
}

void remove_partial_checkpoints(const Communicator& world, const std::string& dir) {
  if (world.rank() != 0) return;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(".step-", 0) == 0 && name.ends_with(".ckpt.tmp")) fs::remove(e.path(), ec);
  }
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
