// Errors convgrid reports to its user.
//
// InputError: bad user input or an impossible request (malformed shape string, impossible grid,
// a file that is not what it claims, an overflowing size, an unmeetable memory limit). Its
// message is one line that names the offending key and value; `main` prints it and exits 1.
// Error: anything else that went wrong (an MPI or oneDNN failure), also one line.
#pragma once

#include <stdexcept>
#include <string>

namespace convgrid {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class InputError : public Error {
 public:
  using Error::Error;
};

}  // namespace convgrid
