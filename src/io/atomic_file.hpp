// Writing a whole file or nothing: the bytes go to a temporary file in the target's directory
// (".<name>.<pid>.tmp"), are flushed and fsynced, and the file is renamed over the target, so a
// reader never sees a partial file and a failed write leaves the target as it was.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace convgrid {

// Writes `parts`, one after the other, to `path` atomically. InputError starting with the path
// when it cannot be written ("<path>: cannot write: <reason>", "<path>: write failed: <reason>");
// the temporary file is removed then.
void write_file_atomically(const std::string& path, const std::vector<std::string_view>& parts);

}  // namespace convgrid
