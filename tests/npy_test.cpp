// Tests of .npy reading and writing: numpy's exact bytes, round trips, header versions 1.0 to 3.0,
// the dict-literal forms numpy and others write, and one test per kind of malformed file.
#include "convgrid/npy.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "throws_input_error.hpp"
#include "temp_dir_test_base.hpp"

namespace convgrid {
namespace {

namespace fs = std::filesystem;
using Shape = std::vector<int64_t>;

// Each test gets its own empty directory.
class NpyTest : public test_data::TempDirTest {
 protected:
  NpyTest() : TempDirTest("convgrid_npy_") {}

  // Writes bytes to bad.npy and checks that reading its header fails with a message that names
  // the file ("<path>: ...") and contains every part.
  ::testing::AssertionResult rejected(std::string_view bytes,
                                      std::initializer_list<std::string_view> parts) const {
    const std::string p = write_file("bad.npy", bytes);
    const std::string named = p + ": ";
    std::vector<std::string_view> all(parts);
    all.push_back(named);
    return throws_input_error([&] { read_npy_header(p); }, all);
  }

  std::string write_file(std::string_view name, std::string_view bytes) const {
    std::ofstream(path(name), std::ios::binary).write(bytes.data(), std::ssize(bytes));
    return path(name);
  }

  static std::string read_file(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
};

// A hand-made file: magic, version major.0, the header length in 2 (v1) or 4 bytes, the header
// text as given (no padding: readers must not depend on it), then `data_bytes` zero bytes.
std::string npy_file(std::string_view header, size_t data_bytes, int major = 1) {
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  const size_t len_bytes = major == 1 ? 2 : 4;
  for (size_t i = 0; i < len_bytes; ++i) s += static_cast<char>(header.size() >> (8 * i) & 0xff);
  s += header;
  s.append(data_bytes, '\0');
  return s;
}

std::string dict_with(std::string_view shape) {
  return "{'descr': '<f4', 'fortran_order': False, 'shape': " + std::string(shape) + ", }\n";
}

// memcmp of n floats; also for n == 0, where either pointer may be null.
bool same_bits(const void* a, const void* b, size_t n) {
  return n == 0 || std::memcmp(a, b, 4 * n) == 0;
}

std::vector<float> sample_data(int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = 0.25f * static_cast<float>(i) - 3.0f;
  return v;
}

// ---- Bytes numpy writes ----------------------------------------------------------------------

TEST(NpyHeaderBytes, MatchesNumpyForZeros2x3) {
  // np.save of np.zeros((2, 3), np.float32): 10 bytes of magic, version and length 0x0076, then
  // the 59-character dict, spaces, '\n'; 128 bytes in all, the first multiple of 64 that fits.
  std::string expected("\x93NUMPY\x01\x00v\x00", 10);
  expected += "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  expected.append(128 - 1 - expected.size(), ' ');
  expected += '\n';
  ASSERT_EQ(expected.size(), 128u);
  EXPECT_EQ(npy_header_bytes({2, 3}), expected);
}

TEST(NpyHeaderBytes, PaddingIsOneToSixtyFourSpaces) {
  // Dict 53 + 36 + 8 = 97 chars, numpy's growth room 21 - len("0") = 20 spaces: 10 + 97 + 20 +
  // '\n' = 128 exactly, and numpy then pads by a full 64 (its padding is never empty): 192.
  const std::string h = npy_header_bytes({0, 100000000000, 100000000000, 10000000000});
  ASSERT_EQ(h.size(), 192u);
  EXPECT_EQ(h.substr(8, 2), std::string("\xb6\x00", 2));  // 182 = 192 - 10
  EXPECT_EQ(h.find_first_not_of(' ', h.find('}') + 1), 191u);
}

TEST(NpyHeaderBytes, EveryShapeIsAlignedAndParsesBack) {
  for (const Shape& shape : {Shape{}, Shape{5}, Shape{0}, Shape{2, 3}, Shape{12345678, 0, 7}}) {
    const std::string h = npy_header_bytes(shape);
    EXPECT_EQ(h.size() % 64, 0u) << npy_shape_string(shape);
    EXPECT_EQ(h.back(), '\n');
    EXPECT_EQ(h.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    EXPECT_EQ(static_cast<unsigned char>(h[8]) + 256 * static_cast<unsigned char>(h[9]),
              static_cast<int>(h.size()) - 10);
  }
}

TEST(NpyHeaderBytes, ShapeStringsArePythonTuples) {
  EXPECT_EQ(npy_shape_string({}), "()");
  EXPECT_EQ(npy_shape_string({5}), "(5,)");
  EXPECT_EQ(npy_shape_string({2, 3, 4}), "(2, 3, 4)");
}

TEST(NpyHeaderBytes, RejectsNegativeAndOverflowingShapes) {
  EXPECT_TRUE(throws_input_error([] { npy_header_bytes({2, -1}); }, {"(2, -1)", "negative"}));
  EXPECT_TRUE(throws_input_error([] { npy_header_bytes({int64_t{1} << 62}); },
                                 {"byte count", "overflows"}));
}

// ---- Round trips -----------------------------------------------------------------------------

TEST_F(NpyTest, RoundTripsSeveralShapes) {
  for (const Shape& shape :
       {Shape{}, Shape{1}, Shape{7}, Shape{0}, Shape{2, 3}, Shape{2, 3, 4, 5}, Shape{3, 0, 2}}) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const std::vector<float> data = sample_data(n);
    const std::string p = path("a.npy");
    write_npy(p, shape, data.data());

    const std::string bytes = read_file(p);
    const std::string header = npy_header_bytes(shape);
    ASSERT_EQ(bytes.size(), header.size() + 4 * data.size());
    EXPECT_EQ(bytes.substr(0, header.size()), header);
    EXPECT_TRUE(same_bits(bytes.data() + header.size(), data.data(), data.size()));

    const NpyHeader h = read_npy_header(p);
    EXPECT_EQ(h.shape, shape);
    EXPECT_EQ(h.data_offset, static_cast<int64_t>(header.size()));
    EXPECT_EQ(h.elems(), n);

    const NpyArray a = read_npy(p, &shape);
    EXPECT_EQ(a.shape, shape);
    ASSERT_EQ(a.data.size(), n);
    EXPECT_TRUE(same_bits(a.data.data(), data.data(), data.size()));
  }
}

TEST_F(NpyTest, KeepsSpecialValuesBitExact) {
  const std::vector<float> data = {-0.0f, std::numeric_limits<float>::infinity(),
                                   std::numeric_limits<float>::quiet_NaN(),
                                   std::numeric_limits<float>::denorm_min()};
  write_npy(path("s.npy"), {4}, data.data());
  const NpyArray a = read_npy(path("s.npy"));
  EXPECT_TRUE(same_bits(a.data.data(), data.data(), 4));
  EXPECT_TRUE(std::signbit(a.data[0]));
}

TEST_F(NpyTest, LongHeaderIsWrittenAsVersion2) {
  // 30000 extents of 1 make a header of about 90000 bytes, more than version 1.0's 65535.
  const Shape shape(30000, 1);
  const float x = 4.5f;
  write_npy(path("v2.npy"), shape, &x);
  const std::string bytes = read_file(path("v2.npy"));
  EXPECT_EQ(bytes[6], '\x02');
  const NpyHeader h = read_npy_header(path("v2.npy"));
  EXPECT_EQ(h.data_offset % 64, 0);
  EXPECT_EQ(h.data_offset + 4, static_cast<int64_t>(bytes.size()));
  EXPECT_EQ(h.shape, shape);
  EXPECT_EQ(read_npy(path("v2.npy")).data[0], 4.5f);
}

TEST_F(NpyTest, ReadsHandMadeVersions2And3) {
  for (int major : {2, 3}) {
    const std::string p = write_file("v.npy", npy_file(dict_with("(3, 1)"), 12, major));
    const NpyHeader h = read_npy_header(p);
    EXPECT_EQ(h.shape, (Shape{3, 1}));
    EXPECT_EQ(h.data_offset, 12 + static_cast<int64_t>(dict_with("(3, 1)").size()));
  }
}

TEST_F(NpyTest, AcceptsEveryDictFormPythonWould) {
  const std::pair<const char*, Shape> cases[] = {
      {"{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4'}", {2, 3}},
      {"{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (5,)}", {5}},
      {"  {'descr':'<f4','fortran_order':False,'shape':(),}  \n", {}},
      {"{\n 'descr' : '<f4' ,\n\t'fortran_order' : False ,\n 'shape' : ( 2 , 3 , ) ,\n}", {2, 3}},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4)}", {0, 4}},
  };
  for (auto& [dict, shape] : cases) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const std::string p = write_file("d.npy", npy_file(dict, 4 * static_cast<size_t>(n)));
    EXPECT_EQ(read_npy_header(p).shape, shape) << dict;
  }
}

// ---- Malformed files -------------------------------------------------------------------------

TEST_F(NpyTest, MissingFileOrDirectory) {
  EXPECT_TRUE(
      throws_input_error([&] { read_npy_header(path("none.npy")); }, {"none.npy", "No such file"}));
  EXPECT_TRUE(
      throws_input_error([&] { read_npy_header(dir()); }, {dir(), "cannot read"}));
}

TEST_F(NpyTest, BadMagic) {
  for (std::string_view bytes : {std::string_view(""), std::string_view("\x93NUM"),
                                 std::string_view("\x93NUMPX\x01\x00\x00\x00", 10)}) {
    EXPECT_TRUE(rejected(bytes, {"not a .npy file"}));
  }
}

TEST_F(NpyTest, TruncatedPreamble) {
  EXPECT_TRUE(rejected("\x93NUMPY\x01", {"preamble truncated"}));
  EXPECT_TRUE(rejected(std::string_view("\x93NUMPY\x02\x00\x10\x00", 10), {"preamble truncated"}));
}

TEST_F(NpyTest, UnsupportedVersion) {
  EXPECT_TRUE(rejected(npy_file(dict_with("(1,)"), 4, 4), {"version 4.0"}));
  std::string bytes = npy_file(dict_with("(1,)"), 4, 1);
  bytes[7] = '\x01';
  EXPECT_TRUE(rejected(bytes, {"version 1.1"}));
}

TEST_F(NpyTest, HeaderLengthBeyondFile) {
  std::string bytes = npy_file(dict_with("(1,)"), 0);
  bytes[8] = '\xe8';  // 1000
  bytes[9] = '\x03';
  EXPECT_TRUE(rejected(bytes, {"header length 1000", "end of the file"}));
}

TEST_F(NpyTest, HeaderNotADictLiteral) {
  const char* bad[] = {
      "",
      "[1, 2]",
      "{'descr' '<f4'}",
      "{'descr': <f4}",
      "{'descr': '<f4}",
      "{'descr': '<\\x66\\x34'}",
      "{descr: '<f4'}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } x",
      "{'descr': '<f4', 'fortran_order': false, 'shape': (2, 3)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2,, 3)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3),,}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1_0,)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2.0,)}",
  };
  for (const char* dict : bad) {
    EXPECT_TRUE(rejected(npy_file(dict, 4), {"not a Python dict literal"})) << dict;
  }
}

TEST_F(NpyTest, HeaderErrorsSayWhatIsWrong) {
  const std::pair<const char*, const char*> bad[] = {
      // Literals Python would not take for a header.
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (5)}", "(5) is not a tuple"},
      {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
       "key 'descr' appears twice"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (01,)}", "leading zero"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
       "99999999999999999999 does not fit in 64 bits"},
      // Missing or unexpected keys.
      {"{'fortran_order': False, 'shape': (1,)}", "no 'descr' key"},
      {"{'descr': '<f4', 'shape': (1,)}", "no 'fortran_order' key"},
      {"{'descr': '<f4', 'fortran_order': False}", "no 'shape' key"},
      {"{}", "no 'descr' key"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': True}", "unexpected key 'x'"},
      // Values of the wrong type.
      {"{'descr': (4,), 'fortran_order': False, 'shape': (1,)}", "'descr' is not a string"},
      {"{'descr': '<f4', 'fortran_order': 'no', 'shape': (1,)}",
       "'fortran_order' is not True or False"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': '1'}", "'shape' is not a tuple"},
      {"{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", "fortran_order is True"},
  };
  for (auto& [dict, what] : bad) EXPECT_TRUE(rejected(npy_file(dict, 4), {what})) << dict;
}

// Found by fuzz/npy_whole: errors quote the header's strings, so a control character in one
// broke the one-line message; none is allowed.
TEST_F(NpyTest, HeaderStringsWithControlCharacters) {
  for (const char* dict : {"{'descr\n': '<f4', 'fortran_order': False, 'shape': (1,)}",
                           "{'descr': '<f4\r', 'fortran_order': False, 'shape': (1,)}",
                           "{'descr': '<f4', 'fortran_order': False, 'sh\x01" "ape': (1,)}",
                           "{'descr': '<f4', 'shape': (1,), '\x7f': True}"}) {
    EXPECT_TRUE(rejected(npy_file(dict, 4), {"escape or control character in a string"})) << dict;
  }
}

TEST_F(NpyTest, DtypeOtherThanLittleEndianFloat32) {
  for (std::string dtype : {"<f8", ">f4", "|u1", "<i4", "f4"}) {
    const std::string dict = "{'descr': '" + dtype + "', 'fortran_order': False, 'shape': (1,), }";
    EXPECT_TRUE(rejected(npy_file(dict, 4), {"dtype '" + dtype + "'", "'<f4'"}));
  }
}

TEST_F(NpyTest, NegativeShape) {
  EXPECT_TRUE(rejected(npy_file(dict_with("(2, -3)"), 0), {"(2, -3)", "negative"}));
}

TEST_F(NpyTest, ElementCountOverflow) {
  EXPECT_TRUE(rejected(npy_file(dict_with("(4294967296, 4294967296)"), 0),
                       {"element count of shape (4294967296, 4294967296)", "overflows"}));
  EXPECT_TRUE(
      rejected(npy_file(dict_with("(2305843009213693952,)"), 0), {"byte count", "overflows"}));
}

TEST_F(NpyTest, TruncatedData) {
  const std::string bytes = npy_file(dict_with("(2, 3)"), 20);
  EXPECT_TRUE(rejected(bytes, {"truncated", "needs 24 bytes", "holds 20"}));
  EXPECT_TRUE(throws_input_error([&] { read_npy(path("bad.npy")); }, {"bad.npy", "truncated"}));
}

TEST_F(NpyTest, TrailingData) {
  EXPECT_TRUE(rejected(npy_file(dict_with("(2, 3)"), 28), {"4 bytes of extra data"}));
}

TEST_F(NpyTest, ShapeMismatch) {
  const NpyHeader h{{2, 3, 5, 5}, 128};
  EXPECT_TRUE(throws_input_error(
      [&] {
        check_npy_shape("x.npy", h, {2, 3, 4, 4}, "the layer's input");
      },
      {"x.npy: shape (2, 3, 5, 5) does not match the layer's input (2, 3, 4, 4)"}));
  EXPECT_NO_THROW(check_npy_shape("x.npy", h, {2, 3, 5, 5}, "the layer's input"));

  const std::vector<float> data = sample_data(6);
  write_npy(path("m.npy"), {2, 3}, data.data());
  const Shape expected{3, 2};
  EXPECT_TRUE(throws_input_error([&] { read_npy(path("m.npy"), &expected); },
                                 {"m.npy: shape (2, 3) does not match the expected shape (3, 2)"}));
}

TEST_F(NpyTest, WriteErrors) {
  const float x = 0;
  EXPECT_TRUE(throws_input_error([&] { write_npy(path("no/such/dir/w.npy"), {1}, &x); },
                                 {"w.npy", "cannot open for writing"}));
  EXPECT_TRUE(
      throws_input_error([&] { write_npy(path("w.npy"), {-1}, &x); }, {"w.npy", "negative"}));
}

}  // namespace
}  // namespace convgrid
