// Byte sizes as people write them: the parser of --mem-per-rank values and the "12.5 MiB"-style
// formatter every report and error uses.
#pragma once

#include <cstdint>
#include <string>

namespace convgrid {

// BYTES or a number with KiB/MiB/GiB (or K/M/G, B); InputError naming the value otherwise.
int64_t parse_bytes(const std::string& text);
// "512 B", "12.5 MiB": one decimal from KiB up.
std::string format_bytes(int64_t bytes);

}  // namespace convgrid
