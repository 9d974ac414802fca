// Tests of .npz writing: archives parsed back here, field by field (local headers, central
// directory, end record, CRC-32s computed independently, .npy headers and data), the .npy members
// byte-identical to write_npy's, the ZIP64 limits of the layout, and refused input.
#include "io/npz.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "convgrid/npy.hpp"
#include "temp_dir_test_base.hpp"
#include "throws_input_error.hpp"

namespace convgrid {
namespace {

namespace fs = std::filesystem;
using Shape = std::vector<int64_t>;

// ---- An independent reader ---------------------------------------------------------------------

// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), bit by bit: not zlib's code.
uint32_t crc32_of(std::string_view bytes) {
  uint32_t crc = 0xffffffffu;
  for (unsigned char c : bytes) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

uint64_t le(std::string_view bytes, size_t at, int width) {
  uint64_t v = 0;
  for (int i = width; i-- > 0;) v = v << 8 | static_cast<unsigned char>(bytes.at(at + i));
  return v;
}

struct ParsedMember {
  std::string file_name;
  std::string bytes;  // the whole .npy file
};

// Parses an archive as a zip reader does, from the end record back, and checks every field this
// writer promises; ADD_FAILURE on anything else.
std::vector<ParsedMember> parse_zip(const std::string& zip) {
  std::vector<ParsedMember> out;
  if (zip.size() < 22) {
    ADD_FAILURE() << "archive of " << zip.size() << " bytes has no end record";
    return out;
  }
  const size_t end = zip.size() - 22;
  EXPECT_EQ(le(zip, end, 4), 0x06054b50u) << "end record signature";
  EXPECT_EQ(le(zip, end + 4, 2), 0u);
  EXPECT_EQ(le(zip, end + 6, 2), 0u);
  const uint64_t entries = le(zip, end + 8, 2);
  EXPECT_EQ(le(zip, end + 10, 2), entries);
  const uint64_t central_bytes = le(zip, end + 12, 4), central_at = le(zip, end + 16, 4);
  EXPECT_EQ(le(zip, end + 20, 2), 0u) << "comment length";
  EXPECT_EQ(central_at + central_bytes, end) << "central directory ends at the end record";
  size_t at = central_at, next_local = 0;
  for (uint64_t e = 0; e < entries; ++e) {
    EXPECT_EQ(le(zip, at, 4), 0x02014b50u) << "central header " << e;
    EXPECT_EQ(le(zip, at + 6, 2), 20u) << "version needed";
    const uint64_t flags = le(zip, at + 8, 2), method = le(zip, at + 10, 2);
    const uint64_t time = le(zip, at + 12, 2), date = le(zip, at + 14, 2);
    const uint64_t crc = le(zip, at + 16, 4), csize = le(zip, at + 20, 4),
                   usize = le(zip, at + 24, 4);
    const uint64_t name_len = le(zip, at + 28, 2), extra_len = le(zip, at + 30, 2),
                   comment_len = le(zip, at + 32, 2);
    const uint64_t local = le(zip, at + 42, 4);
    EXPECT_EQ(flags, 0u);
    EXPECT_EQ(method, 0u) << "STORED";
    EXPECT_EQ(time, 0u);
    EXPECT_EQ(date, 0x21u) << "1980-01-01";
    EXPECT_EQ(csize, usize);
    EXPECT_EQ(extra_len + comment_len, 0u);
    const std::string name = zip.substr(at + 46, name_len);
    EXPECT_EQ(local, next_local) << name << ": members lie back to back";
    // The local header repeats the same fields.
    EXPECT_EQ(le(zip, local, 4), 0x04034b50u) << name << ": local header signature";
    EXPECT_EQ(zip.substr(local + 4, 26), zip.substr(at + 6, 24) + std::string(2, '\0'))
        << name << ": local and central fields differ";
    EXPECT_EQ(zip.substr(local + 30, name_len), name);
    const size_t data_at = local + 30 + name_len;
    ParsedMember m{name, zip.substr(data_at, usize)};
    EXPECT_EQ(crc32_of(m.bytes), crc) << name << ": CRC-32";
    next_local = data_at + usize;
    at += 46 + name_len;
    out.push_back(std::move(m));
  }
  EXPECT_EQ(next_local, central_at) << "central directory follows the last member";
  EXPECT_EQ(at, end);
  return out;
}

// A .npy member's header dict text and its data, with the preamble's invariants checked.
struct ParsedNpy {
  std::string dict;
  std::string data;
};

ParsedNpy parse_npy(const std::string& bytes) {
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const uint64_t len = le(bytes, 8, 2);
  const size_t data_at = 10 + len;
  EXPECT_EQ(data_at % 64, 0u) << "data is 64-byte aligned";
  EXPECT_EQ(bytes.at(data_at - 1), '\n');
  std::string dict = bytes.substr(10, len);
  dict.erase(dict.find_last_not_of(" \n") + 1);
  return {dict, bytes.substr(data_at)};
}

template <class T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

class NpzTest : public test_data::TempDirTest {
 protected:
  NpzTest() : TempDirTest("convgrid_npz_") {}

  static std::string read_file(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
};

// ---- Round trips -----------------------------------------------------------------------------

TEST_F(NpzTest, ArraysOfEveryRankAndDtypeParseBack) {
  const std::vector<float> w = {1.5f, -2.0f, 0.25f, 3.0f, -0.5f, 7.0f,
                                0.0f, -1.0f, 2.5f,  4.0f, -3.5f, 6.0f};
  const std::vector<NpzArray> arrays = {
      NpzArray::float32("conv1.weight", {2, 3, 1, 2}, w),
      NpzArray::float32("fc.weight", {3, 4}, w),
      NpzArray::float32("fc.bias", {5}, {1, 2, 3, 4, 5}),
      NpzArray::float32("scalar", {}, {42.0f}),
      NpzArray::float32("empty", {0, 3}, {}),
      NpzArray::int64("bn1.num_batches_tracked", {}, {12345678901}),
      NpzArray::int64("counts", {3}, {-1, 0, int64_t{1} << 40}),
  };
  const std::string p = path("w.npz");
  write_npz(p, arrays);
  const std::vector<ParsedMember> members = parse_zip(read_file(p));
  ASSERT_EQ(members.size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    const NpzArray& a = arrays[i];
    EXPECT_EQ(members[i].file_name, a.name + ".npy");
    const ParsedNpy npy = parse_npy(members[i].bytes);
    const std::string descr = a.dtype == NpzDtype::float32 ? "<f4" : "<i8";
    EXPECT_TRUE(npy.dict.starts_with(
        "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + npy_shape_string(a.shape) +
        ", }"))
        << npy.dict;
    EXPECT_EQ(npy.data, a.data) << a.name;
  }
  EXPECT_EQ(parse_npy(members[5].bytes).data, raw(std::vector<int64_t>{12345678901}));
  EXPECT_EQ(parse_npy(members[1].bytes).data, raw(w));
}

TEST_F(NpzTest, Float32MembersAreWhatWriteNpyWrites) {
  const std::vector<float> v = {0.5f, -1.25f, 3.0f, 8.0f, 9.5f, -7.0f};
  for (const Shape& shape : {Shape{6}, Shape{2, 3}, Shape{1, 2, 1, 3}}) {
    write_npy(path("a.npy"), shape, v.data());
    write_npz(path("a.npz"), {NpzArray::float32("a", shape, v)});
    const std::vector<ParsedMember> members = parse_zip(read_file(path("a.npz")));
    ASSERT_EQ(members.size(), 1u);
    EXPECT_EQ(members[0].bytes, read_file(path("a.npy"))) << npy_shape_string(shape);
  }
}

TEST_F(NpzTest, Int64HeaderKeepsNumpysAlignment) {
  for (const Shape& shape : {Shape{}, Shape{1}, Shape{3, 4}}) {
    const std::string f4 = npz_member_header(NpzDtype::float32, shape);
    const std::string i8 = npz_member_header(NpzDtype::int64, shape);
    ASSERT_EQ(i8.size(), f4.size());
    EXPECT_EQ(i8.size() % 64, 0u);
    EXPECT_NE(i8.find("'descr': '<i8'"), std::string::npos) << i8;
    EXPECT_EQ(i8.find("<f4"), std::string::npos) << i8;
  }
}

TEST_F(NpzTest, SameArraysGiveSameBytesAndReplaceTheFile) {
  const std::vector<NpzArray> arrays = {NpzArray::float32("x", {2}, {1.0f, 2.0f})};
  const std::string p = path("same.npz");
  std::ofstream(p) << "an older file";
  write_npz(p, arrays);
  const std::string first = read_file(p);
  write_npz(p, arrays);
  EXPECT_EQ(read_file(p), first);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir()), fs::directory_iterator()), 1)
      << "no temporary file is left";
}

TEST_F(NpzTest, EmptyArchiveIsAnEndRecordOnly) {
  write_npz(path("none.npz"), {});
  const std::string zip = read_file(path("none.npz"));
  EXPECT_EQ(zip.size(), 22u);
  EXPECT_TRUE(parse_zip(zip).empty());
}

TEST_F(NpzTest, NonAsciiNamesAreMarkedUtf8) {
  write_npz(path("u.npz"), {NpzArray::float32("gew\xc3\xa4"
                                              "cht",
                                              {1}, {1.0f})});
  const std::string zip = read_file(path("u.npz"));
  EXPECT_EQ(le(zip, 6, 2), 0x800u) << "local header flag";
}

// ---- Refused input ---------------------------------------------------------------------------

TEST_F(NpzTest, UnwritablePathIsAnInputErrorNamingIt) {
  const std::string p = path("no/such/dir/w.npz");
  EXPECT_TRUE(throws_input_error([&] { write_npz(p, {NpzArray::float32("x", {1}, {1.0f})}); },
                                 {p, "cannot write"}));
}

TEST_F(NpzTest, BadArraysAreRefusedAndLeaveTheFileAlone) {
  const std::string p = path("keep.npz");
  std::ofstream(p) << "kept";
  const NpzArray x = NpzArray::float32("x", {2}, {1.0f, 2.0f});
  EXPECT_TRUE(throws_input_error([&] { write_npz(p, {x, x}); }, {p, "two arrays are named 'x'"}));
  EXPECT_TRUE(throws_input_error([&] { write_npz(p, {NpzArray::float32("y", {3}, {1.0f})}); },
                                 {p, "'y'", "(3,)", "needs 12 bytes", "has 4"}));
  EXPECT_TRUE(throws_input_error([&] { write_npz(p, {NpzArray::float32("z", {-1}, {})}); },
                                 {p, "'z'", "negative extent -1"}));
  EXPECT_TRUE(throws_input_error([&] { write_npz(p, {NpzArray::float32("", {1}, {1.0f})}); },
                                 {p, "empty name"}));
  EXPECT_EQ(read_file(p), "kept");
}

// ---- Layout and ZIP64 limits -------------------------------------------------------------------

TEST(ZipLayout, OffsetsFollowTheHeaders) {
  const ZipLayout l = zip_layout({{"a.npy", 100}, {"bb.npy", 7}}, "t");
  ASSERT_EQ(l.local_offsets.size(), 2u);
  EXPECT_EQ(l.local_offsets[0], 0u);
  EXPECT_EQ(l.local_offsets[1], 30u + 5 + 100);
  EXPECT_EQ(l.central_offset, 135u + 30 + 6 + 7);
  EXPECT_EQ(l.central_bytes, 46u + 5 + 46 + 6);
  EXPECT_EQ(l.total_bytes, l.central_offset + l.central_bytes + 22);
}

TEST(ZipLayout, RefusesWhatNeedsZip64) {
  constexpr uint64_t GiB = uint64_t{1} << 30;
  EXPECT_TRUE(throws_input_error(
      [&] {
        zip_layout({{"big.npy", 4 * GiB}}, "out.npz");
      },
      {"out.npz", "big.npy", "4294967296 bytes", "ZIP64"}));
  EXPECT_TRUE(throws_input_error(
      [&] {
        zip_layout({{"big.npy", 4 * GiB - 1}}, "out.npz");
      },
      {"out.npz", "big.npy", "ZIP64"}));
  EXPECT_TRUE(throws_input_error(
      [&] {
        zip_layout({{"a.npy", 2 * GiB}, {"b.npy", 2 * GiB}}, "out.npz");
      },
      {"out.npz", "the archive would have", "ZIP64"}));
  EXPECT_TRUE(throws_input_error(
      [&] {
        zip_layout(std::vector<ZipMemberSize>(65536, {"a.npy", 0}), "out.npz");
      },
      {"out.npz", "65536 arrays", "ZIP64"}));
  EXPECT_TRUE(throws_input_error(
      [&] {
        zip_layout({{std::string(65536, 'n'), 0}}, "out.npz");
      },
      {"65536 bytes"}));
  // The largest archive that fits: 4 GiB - 1 bytes in all.
  const uint64_t fits = 4 * GiB - 1 - (30 + 5) - (46 + 5) - 22;
  EXPECT_EQ(zip_layout({{"a.npy", fits}}, "out.npz").total_bytes, 4 * GiB - 1);
  EXPECT_TRUE(throws_input_error(
      [&] {
        zip_layout({{"a.npy", fits + 1}}, "out.npz");
      },
      {"the archive would have 4294967296 bytes"}));
}

}  // namespace
}  // namespace convgrid
