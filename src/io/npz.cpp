// Writing .npz archives (see npz.hpp): the zip layout, the headers of each member and the end
// record, written atomically (io/atomic_file.hpp).
#include "io/npz.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <bit>
#include <set>
#include <string_view>

#include "convgrid/checked.hpp"
#include "convgrid/error.hpp"
#include "convgrid/npy.hpp"
#include "io/atomic_file.hpp"

namespace convgrid {
namespace {

static_assert(std::endian::native == std::endian::little,
              "array data is copied as is into '<f4' and '<i8' members");

constexpr uint32_t kLocalSignature = 0x04034b50, kCentralSignature = 0x02014b50,
                   kEndSignature = 0x06054b50;
constexpr uint64_t kLocalFixedBytes = 30, kCentralFixedBytes = 46, kEndBytes = 22;
constexpr uint64_t kZip32Limit = uint64_t{1} << 32;  // archives and members must stay below
constexpr uint64_t kMaxField16 = 0xffff;
constexpr uint16_t kVersion = 20;                       // 2.0: STORED members, no ZIP64
constexpr uint16_t kUtf8NameFlag = 0x0800;              // general purpose bit 11
constexpr uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01, the earliest DOS date
constexpr uint16_t kDosTime = 0;

size_t element_bytes(NpzDtype dtype) { return dtype == NpzDtype::float32 ? 4 : 8; }

void put16(std::string& out, uint64_t v) {
  for (int i = 0; i < 2; ++i) out += static_cast<char>(v >> (8 * i) & 0xff);
}
void put32(std::string& out, uint64_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>(v >> (8 * i) & 0xff);
}

// A member as it goes into the archive: file name, .npy preamble, data and their CRC-32.
struct Member {
  std::string file_name, header;
  const std::string* data = nullptr;
  uint32_t crc = 0;

  uint64_t bytes() const { return header.size() + data->size(); }
  uint16_t flags() const {
    for (unsigned char c : file_name) {
      if (c >= 0x80) return kUtf8NameFlag;
    }
    return 0;
  }
};

// The fields a local and a central header share, from "version needed" to the name length.
void put_common_fields(std::string& out, const Member& m) {
  put16(out, kVersion);
  put16(out, m.flags());
  put16(out, 0);  // compression: STORED
  put16(out, kDosTime);
  put16(out, kDosDate);
  put32(out, m.crc);
  put32(out, m.bytes());  // compressed size
  put32(out, m.bytes());  // uncompressed size
  put16(out, m.file_name.size());
}

std::string local_header(const Member& m) {
  std::string out;
  put32(out, kLocalSignature);
  put_common_fields(out, m);
  put16(out, 0);  // extra field length
  return out + m.file_name;
}

std::string central_header(const Member& m, uint64_t local_offset) {
  std::string out;
  put32(out, kCentralSignature);
  put16(out, kVersion);  // version made by: 2.0, MS-DOS attributes
  put_common_fields(out, m);
  put16(out, 0);  // extra field length
  put16(out, 0);  // comment length
  put16(out, 0);  // disk number start
  put16(out, 0);  // internal attributes
  put32(out, 0);  // external attributes
  put32(out, local_offset);
  return out + m.file_name;
}

std::string end_record(size_t members, const ZipLayout& layout) {
  std::string out;
  put32(out, kEndSignature);
  put16(out, 0);  // this disk
  put16(out, 0);  // disk of the central directory
  put16(out, members);
  put16(out, members);
  put32(out, layout.central_bytes);
  put32(out, layout.central_offset);
  put16(out, 0);  // comment length
  return out;
}

uint64_t add_or_limit(uint64_t a, uint64_t b) {
  uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

// Checks an array's name and that its data holds prod(shape) elements; returns its member.
Member member_of(const NpzArray& a, const std::string& path) {
  if (a.name.empty()) throw InputError(fmt::format("{}: an array has an empty name", path));
  const std::string what = fmt::format("{}: element count of '{}'", path, a.name);
  int64_t elems = 1;
  for (int64_t d : a.shape) {
    if (d < 0) {
      throw InputError(fmt::format("{}: array '{}' has the negative extent {} in shape {}", path,
                                   a.name, d, npy_shape_string(a.shape)));
    }
    elems = checked_mul(elems, d, what);
  }
  const int64_t bytes = checked_mul(elems, static_cast<int64_t>(element_bytes(a.dtype)), what);
  if (static_cast<uint64_t>(bytes) != a.data.size()) {
    throw InputError(fmt::format("{}: array '{}' of shape {} needs {} bytes of data, it has {}",
                                 path, a.name, npy_shape_string(a.shape), bytes, a.data.size()));
  }
  Member m{a.name + ".npy", npz_member_header(a.dtype, a.shape), &a.data, 0};
  uLong crc = crc32_z(0L, reinterpret_cast<const Bytef*>(m.header.data()), m.header.size());
  crc = crc32_z(crc, reinterpret_cast<const Bytef*>(a.data.data()), a.data.size());
  m.crc = static_cast<uint32_t>(crc);
  return m;
}

}  // namespace

NpzArray NpzArray::float32(std::string name, std::vector<int64_t> shape,
                           const std::vector<float>& values) {
  return {std::move(name), std::move(shape), NpzDtype::float32,
          std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float))};
}

NpzArray NpzArray::int64(std::string name, std::vector<int64_t> shape,
                         const std::vector<int64_t>& values) {
  return {
      std::move(name), std::move(shape), NpzDtype::int64,
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t))};
}

ZipLayout zip_layout(const std::vector<ZipMemberSize>& members, std::string_view where) {
  if (members.size() > kMaxField16) {
    throw InputError(
        fmt::format("{}: {} arrays; an archive of more than {} needs ZIP64, which "
                    "convgrid does not write",
                    where, members.size(), kMaxField16));
  }
  ZipLayout layout;
  uint64_t at = 0;
  for (const ZipMemberSize& m : members) {
    if (m.file_name.size() > kMaxField16) {
      throw InputError(fmt::format("{}: a member name of {} bytes is over the zip limit of {}",
                                   where, m.file_name.size(), kMaxField16));
    }
    if (m.bytes >= kZip32Limit - 1) {  // 0xffffffff marks a ZIP64 size
      throw InputError(
          fmt::format("{}: member {} has {} bytes; a member of 4 GiB or more needs "
                      "ZIP64, which convgrid does not write",
                      where, m.file_name, m.bytes));
    }
    layout.local_offsets.push_back(at);
    at = add_or_limit(at, kLocalFixedBytes + m.file_name.size() + m.bytes);
    layout.central_bytes += kCentralFixedBytes + m.file_name.size();
  }
  layout.central_offset = at;
  layout.total_bytes = add_or_limit(at, layout.central_bytes + kEndBytes);
  if (layout.total_bytes >= kZip32Limit) {
    throw InputError(
        fmt::format("{}: the archive would have {} bytes; one of 4 GiB or more needs "
                    "ZIP64, which convgrid does not write",
                    where,
                    layout.total_bytes == UINT64_MAX ? std::string("2^64 or more")
                                                     : std::to_string(layout.total_bytes)));
  }
  return layout;
}

std::string npz_member_header(NpzDtype dtype, const std::vector<int64_t>& shape) {
  std::string header = npy_header_bytes(shape);
  if (dtype == NpzDtype::int64) {
    // The same dict with another dtype of the same length: the padding stays right.
    constexpr std::string_view f4 = "'descr': '<f4'", i8 = "'descr': '<i8'";
    const size_t at = header.find(f4);
    if (at == std::string::npos) throw Error("npy_header_bytes wrote no 'descr': '<f4'");
    header.replace(at, f4.size(), i8);
  }
  return header;
}

void write_npz(const std::string& path, const std::vector<NpzArray>& arrays) {
  std::vector<Member> members;
  std::vector<ZipMemberSize> sizes;
  std::set<std::string> names;
  for (const NpzArray& a : arrays) {
    if (!names.insert(a.name).second) {
      throw InputError(fmt::format("{}: two arrays are named '{}'", path, a.name));
    }
    members.push_back(member_of(a, path));
    sizes.push_back({members.back().file_name, members.back().bytes()});
  }
  const ZipLayout layout = zip_layout(sizes, path);

  std::vector<std::string> headers;  // local headers, then the central directory and end record
  headers.reserve(members.size() + 1);
  std::string central;
  for (size_t i = 0; i < members.size(); ++i) {
    headers.push_back(local_header(members[i]));
    central += central_header(members[i], layout.local_offsets[i]);
  }
  headers.push_back(central + end_record(members.size(), layout));
  std::vector<std::string_view> parts;
  for (size_t i = 0; i < members.size(); ++i) {
    parts.insert(parts.end(), {headers[i], members[i].header, *members[i].data});
  }
  parts.push_back(headers.back());

  write_file_atomically(path, parts);
}

}  // namespace convgrid
