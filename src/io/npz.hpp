// NumPy .npz archives, written as np.savez does: a zip archive of "<name>.npy" members, each
// STORED (no compression) with its CRC-32, so np.load, torch and Python's zipfile read them.
//
// Archive layout (all little-endian, no data descriptors, no ZIP64):
//   per member   local file header (30 bytes + name), then the member's bytes (a .npy file)
//   then         one central directory header per member (46 bytes + name)
//   then         the end of central directory record (22 bytes)
// Every member has the fixed time stamp 1980-01-01 00:00, so the same arrays give the same bytes.
// A member or an archive of 4 GiB or more would need ZIP64 extensions: it is refused
// (InputError), never written as a broken file.
//
// Members are float32 ('<f4') or int64 ('<i8') arrays of any rank, a 0-d array included.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace convgrid {

enum class NpzDtype { float32, int64 };

// One array of the archive: its name (the member is "<name>.npy"), C-order shape and raw data.
struct NpzArray {
  std::string name;
  std::vector<int64_t> shape;  // () for a 0-d array
  NpzDtype dtype = NpzDtype::float32;
  std::string data;  // prod(shape) elements, little-endian, 4 bytes each (float32) or 8 (int64)

  static NpzArray float32(std::string name, std::vector<int64_t> shape,
                          const std::vector<float>& values);
  static NpzArray int64(std::string name, std::vector<int64_t> shape,
                        const std::vector<int64_t>& values);
};

// Where each member's local header starts, and where the central directory starts and how long
// it is, for members of these file names and sizes in bytes. InputError, starting with `where`,
// when the archive would need ZIP64: a member or the archive of 4 GiB or more, more than 65535
// members, or a name longer than 65535 bytes.
struct ZipMemberSize {
  std::string file_name;  // "<name>.npy"
  uint64_t bytes = 0;
};
struct ZipLayout {
  std::vector<uint64_t> local_offsets;
  uint64_t central_offset = 0, central_bytes = 0, total_bytes = 0;
};
ZipLayout zip_layout(const std::vector<ZipMemberSize>& members, std::string_view where);

// The .npy preamble (npy_header_bytes) of an array of this dtype and shape.
std::string npz_member_header(NpzDtype dtype, const std::vector<int64_t>& shape);

// Writes the arrays to `path` atomically (a temporary file in the same directory, renamed).
// InputError for two arrays of one name, data that does not match a shape, an archive that
// needs ZIP64, or a path that cannot be written (the message starts with the path).
void write_npz(const std::string& path, const std::vector<NpzArray>& arrays);

}  // namespace convgrid
