// NumPy .npy files of float32 ('<f4', C order, little-endian), read and written as numpy does.
//
// File layout: "\x93NUMPY", major, minor, the header length (uint16 LE in version 1.0, uint32 LE
// in 2.0 and 3.0), then the header: a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and ended by '\n' so that the data starts at a multiple of 64 bytes.
// Reading accepts versions 1.0, 2.0 and 3.0; writing uses 1.0, or 2.0 when the header does not
// fit in 65535 bytes, and makes the same bytes as numpy's np.save.
//
// Every problem with a file is an InputError whose one-line message starts with the path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "convgrid/memory.hpp"

namespace convgrid {

struct NpyHeader {
  std::vector<int64_t> shape;  // () for a 0-d array
  int64_t data_offset = 0;     // bytes from the start of the file to the first element
  // Product of shape (1 for a 0-d array), checked against overflow.
  int64_t elems() const;
};

// Reads and checks the preamble, and that the file holds exactly data_offset + 4 * elems() bytes,
// so that a reader may fetch any part of the data at data_offset without further checks.
NpyHeader read_npy_header(const std::string& path);

// Throws InputError unless header.shape == expected, e.g.
//   "x.npy: shape (2, 3, 5, 5) does not match the layer's input (2, 3, 4, 4)"
// for what = "the layer's input".
void check_npy_shape(const std::string& path, const NpyHeader& header,
                     const std::vector<int64_t>& expected, std::string_view what);

// The whole preamble (magic, version, length, padded header) to write before the data of an
// array of this shape; its size is the data offset. Throws InputError for a negative extent or a
// byte count that overflows.
std::string npy_header_bytes(const std::vector<int64_t>& shape);

// "(2, 3)", "(5,)", "()": a shape as Python prints a tuple.
std::string npy_shape_string(const std::vector<int64_t>& shape);

struct NpyArray {
  std::vector<int64_t> shape;
  Buffer data;  // elems() floats in C order
};

// Reads a whole file; with expected_shape, a different shape is an InputError naming both.
NpyArray read_npy(const std::string& path, const std::vector<int64_t>* expected_shape = nullptr);

// Writes prod(shape) floats from data (C order) with npy_header_bytes(shape) before them.
void write_npy(const std::string& path, const std::vector<int64_t>& shape, const float* data);

}  // namespace convgrid
