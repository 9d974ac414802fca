// MPI-IO of one slice per rank: the slice's runs along the last dimension become an hindexed
// file type over the data that follows the .npy header. The file I/O point of the SMPI build
// (sim/simulation.hpp): SMPI's simulated hosts have no disk and MPI_File_open aborts there, so
// that build reads and writes the same runs with POSIX pread/pwrite on this machine's file
// (real data, no simulated I/O time).
#include "io/npy_slices.hpp"

#include <mpi.h>

#include <climits>
#include <vector>

#ifdef CONVGRID_SMPI
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

#include <fmt/format.h>

#include "comm/collective_check.hpp"
#include "convgrid/error.hpp"
#include "convgrid/npy.hpp"

namespace convgrid {
namespace {

#ifndef CONVGRID_SMPI
// The file type selecting the slice's elements in the global tensor, in slice order.
MPI_Datatype slice_filetype(const Box4& global, const Slice& slice) {
  std::vector<int> lengths;
  std::vector<MPI_Aint> displs;
  for_each_run(slice, [&](int64_t a, int64_t b, int64_t c, int64_t x0, int64_t x1, int64_t) {
    lengths.push_back(static_cast<int>(x1 - x0));
    displs.push_back(static_cast<MPI_Aint>(global.offset(a, b, c, x0) * 4));
  });
  MPI_Datatype t;
  MPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), displs.data(),
                           MPI_FLOAT, &t);
  MPI_Type_commit(&t);
  return t;
}

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, len);
}

#endif

std::vector<int64_t> extents(const Box4& b) { return {b.extent(0), b.extent(1), b.extent(2), b.extent(3)}; }

#ifndef CONVGRID_SMPI
// Runs one MPI-IO step on every rank and turns a failure on any rank into the same error.
template <class F>
void io_step(const Communicator& comm, const std::string& path, const char* what, F&& f) {
  int rc = f();
  collective_check(comm, rc == MPI_SUCCESS,
                   fmt::format("{}: {} failed: {}", path, what, rc == MPI_SUCCESS ? "" : mpi_error_string(rc)));
}
#endif


#ifdef CONVGRID_SMPI
// The slice's runs, in slice order, moved between `data` and the file at `data_offset`: pread
// (read) or pwrite (write). Returns an error text, empty on success.
std::string transfer_runs_posix(int fd, int64_t data_offset, const Box4& global, const Slice& slice,
                                float* data, bool write) {
  std::string error;
  int64_t done = 0;
  for_each_run(slice, [&](int64_t a, int64_t b, int64_t c, int64_t x0, int64_t x1, int64_t) {
    if (!error.empty()) return;
    const size_t bytes = static_cast<size_t>(x1 - x0) * 4;
    const off_t at = static_cast<off_t>(data_offset + global.offset(a, b, c, x0) * 4);
    char* p = reinterpret_cast<char*>(data + done);
    for (size_t moved = 0; moved < bytes;) {
      const ssize_t n = write ? ::pwrite(fd, p + moved, bytes - moved, at + static_cast<off_t>(moved))
                              : ::pread(fd, p + moved, bytes - moved, at + static_cast<off_t>(moved));
      if (n <= 0) {
        error = n == 0 ? "unexpected end of the file" : std::strerror(errno);
        return;
      }
      moved += static_cast<size_t>(n);
    }
    done += x1 - x0;
  });
  return error;
}
#endif

}  // namespace

void read_npy_slice(const Communicator& comm, const std::string& path, const Box4& global,
                    const Slice& slice, float* out, const char* what) {
  NpyHeader header;
  std::string error;
  try {
    header = read_npy_header(path);
    check_npy_shape(path, header, extents(global), what);
  } catch (const InputError& e) {
    error = e.what();
  }
  collective_check(comm, error.empty(), error);
#ifdef CONVGRID_SMPI
  const int fd = ::open(path.c_str(), O_RDONLY);
  const std::string failed = fd < 0 ? fmt::format("cannot open: {}", std::strerror(errno))
                                    : transfer_runs_posix(fd, header.data_offset, global, slice, out, /*write=*/false);
  if (fd >= 0) ::close(fd);
  collective_check(comm, failed.empty(), fmt::format("{}: reading failed: {}", path, failed));
#else
  if (slice.size() > INT_MAX) throw Error(fmt::format("{}: slice of {} elements is too large for MPI-IO", path, slice.size()));

  MPI_File file = MPI_FILE_NULL;
  io_step(comm, path, "MPI_File_open", [&] {
    return MPI_File_open(comm.raw(), path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  });
  MPI_Datatype type = slice_filetype(global, slice);
  io_step(comm, path, "MPI_File_set_view", [&] {
    return MPI_File_set_view(file, header.data_offset, MPI_FLOAT, type, "native", MPI_INFO_NULL);
  });
  io_step(comm, path, "reading", [&] {
    return MPI_File_read_all(file, out, static_cast<int>(slice.size()), MPI_FLOAT, MPI_STATUS_IGNORE);
  });
  MPI_Type_free(&type);
  MPI_File_close(&file);
#endif
}

void write_npy_slice(const Communicator& comm, const std::string& path, const Box4& global,
                     const Slice& slice, const float* data) {
  const std::string preamble = npy_header_bytes(extents(global));
  const MPI_Offset total = static_cast<MPI_Offset>(preamble.size()) + global.volume() * 4;
#ifdef CONVGRID_SMPI
  // Rank 0 creates the file at its full size with the header; then every rank writes its runs.
  std::string error;
  if (comm.rank() == 0) {
    const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(total)) != 0 ||
        ::pwrite(fd, preamble.data(), preamble.size(), 0) != static_cast<ssize_t>(preamble.size())) {
      error = std::strerror(errno);
    }
    if (fd >= 0) ::close(fd);
  }
  collective_check(comm, error.empty(), fmt::format("{}: opening for writing failed: {}", path, error));
  // One check after the transfer (a rank that cannot open reports it there): no descriptor is
  // left open on the ranks that could when another could not.
  const int fd = ::open(path.c_str(), O_WRONLY);
  error = fd < 0 ? fmt::format("cannot open for writing: {}", std::strerror(errno))
                 : transfer_runs_posix(fd, static_cast<int64_t>(preamble.size()), global, slice,
                                       const_cast<float*>(data), /*write=*/true);
  if (fd >= 0) ::close(fd);
  collective_check(comm, error.empty(), fmt::format("{}: writing failed: {}", path, error));
#else
  if (slice.size() > INT_MAX) throw Error(fmt::format("{}: slice of {} elements is too large for MPI-IO", path, slice.size()));

  MPI_File file = MPI_FILE_NULL;
  io_step(comm, path, "opening for writing", [&] {
    return MPI_File_open(comm.raw(), path.c_str(), MPI_MODE_CREATE | MPI_MODE_WRONLY,
                         MPI_INFO_NULL, &file);
  });
  io_step(comm, path, "MPI_File_set_size", [&] { return MPI_File_set_size(file, total); });
  io_step(comm, path, "writing the header", [&] {
    if (comm.rank() != 0) return int{MPI_SUCCESS};
    return MPI_File_write_at(file, 0, preamble.data(), static_cast<int>(preamble.size()), MPI_BYTE,
                             MPI_STATUS_IGNORE);
  });
  MPI_Datatype type = slice_filetype(global, slice);
  io_step(comm, path, "MPI_File_set_view", [&] {
    return MPI_File_set_view(file, static_cast<MPI_Offset>(preamble.size()), MPI_FLOAT, type,
                             "native", MPI_INFO_NULL);
  });
  io_step(comm, path, "writing", [&] {
    return MPI_File_write_all(file, data, static_cast<int>(slice.size()), MPI_FLOAT, MPI_STATUS_IGNORE);
  });
  MPI_Type_free(&type);
  MPI_File_close(&file);
#endif
}

}  // namespace convgrid
