// Checks, before a job does its work, that the files and directories it will write can be
// written: a read-only file system, a missing or vanished directory, a path that is a directory,
// or a file without write permission is reported then, in one line naming the flag and the path,
// not after an hour of training. Rank 0 checks (it writes every such file, or shares the file
// system with the ranks that do) and every rank throws the same InputError.
#pragma once

#include <string>

#include "comm/communicator.hpp"

namespace convgrid {

// A file the job will create or replace at `path` (a --json report, an output .npy). Nothing is
// created or changed. Collective over `world`; an empty path checks nothing.
void check_output_file(const Communicator& world, const std::string& path, const std::string& flag);

// A directory the job will write files into (--checkpoint-dir): created when missing, then
// proved writable by creating and removing a file in it. Collective over `world`.
void check_output_dir(const Communicator& world, const std::string& dir, const std::string& flag);

// The same checks on this process alone; they return the one-line problem, empty when none.
std::string output_file_problem(const std::string& path, const std::string& flag);
std::string output_dir_problem(const std::string& dir, const std::string& flag);

}  // namespace convgrid
