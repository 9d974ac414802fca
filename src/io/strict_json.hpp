// JSON text from a user's file, parsed strictly and safely: the one place where nlohmann's
// parser meets convgrid's input (networks, machine profiles, checkpoint headers).
//
// Every failure is an InputError of one line that starts with `origin` (the file):
//   "<origin>: not valid JSON: parse error at line 3, column 11: ..."   (syntax, bad UTF-8)
//   "<origin>: not valid JSON: number overflow parsing '1e999'"        (beyond a double)
//   "<origin>: key 'K' appears twice in one object"
//   "<origin>: arrays and objects nested more than 64 deep"
//   "<origin>: the string "a\nb" holds the control character U+000A"   (errors quote strings)
// The depth is refused while parsing, before anything recursive (dump, copy, comparison) runs
// on the value, so a file of nested brackets cannot overflow the stack.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace convgrid {

// Arrays and objects may nest this deep (the outermost counts as 1); convgrid's files need 4.
inline constexpr int kMaxJsonDepth = 64;

nlohmann::json parse_json(std::string_view text, std::string_view origin);
// The same, keeping the keys of each object in file order.
nlohmann::ordered_json parse_ordered_json(std::string_view text, std::string_view origin);

}  // namespace convgrid
