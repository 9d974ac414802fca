// Errors convgrid reports to its user.
//
// InputError: bad user input or an impossible request (malformed shape string, impossible grid,
// a file that is not what it claims, an overflowing size, an unmeetable memory limit). Its
// message is one line that names the offending key and value; `main` prints it and exits 1.
// Error: anything else that went wrong (an MPI or oneDNN failure), also one line.
// JobStopped: not an error but an orderly stop that every rank takes at the same point (a stop
// signal seen at a step boundary): `main` prints its one-line message on every rank, ends MPI
// normally and exits with its status.
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

class JobStopped : public std::runtime_error {
 public:
  JobStopped(const std::string& message, int status)
      : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

}  // namespace convgrid
