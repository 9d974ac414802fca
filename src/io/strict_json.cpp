// Strict JSON parsing (see strict_json.hpp): nlohmann's parser with a callback that bounds the
// depth and refuses repeated keys, and every nlohmann exception turned into an InputError.
#include "io/strict_json.hpp"

#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "convgrid/error.hpp"

namespace convgrid {
namespace {

// nlohmann's message without its "[json.exception.parse_error.101] " tag.
std::string_view without_tag(std::string_view what) {
  if (what.starts_with('[')) {
    if (auto end = what.find("] "); end != std::string_view::npos) what.remove_prefix(end + 2);
  }
  return what;
}

// Refuses a key or string value with a control character (after unescaping): errors quote
// names and values, and must stay one line.
template <class Json>
void check_one_line(const Json& string, std::string_view origin) {
  for (const unsigned char c : string.template get_ref<const std::string&>()) {
    if (c < 0x20 || c == 0x7f) {
      std::string shown = string.dump();  // escaped: one line
      if (shown.size() > 40) shown = shown.substr(0, 37) + "...";
      throw InputError(
          fmt::format("{}: the string {} holds the control character U+{:04X}", origin, shown, c));
    }
  }
}

template <class Json>
Json parse_strict(std::string_view text, std::string_view origin) {
  std::vector<std::set<std::string>> keys;  // those of each object still open
  auto check = [&](int depth, typename Json::parse_event_t event, Json& parsed) {
    using Event = typename Json::parse_event_t;
    // depth: the number of arrays and objects around the one that starts.
    if ((event == Event::object_start || event == Event::array_start) && depth >= kMaxJsonDepth) {
      throw InputError(
          fmt::format("{}: arrays and objects nested more than {} deep", origin, kMaxJsonDepth));
    }
    if ((event == Event::key || event == Event::value) && parsed.is_string()) {
      check_one_line(parsed, origin);
    }
    if (event == Event::object_start) keys.emplace_back();
    if (event == Event::object_end) keys.pop_back();
    if (event == Event::key && !keys.back().insert(parsed.template get<std::string>()).second) {
      throw InputError(fmt::format("{}: key '{}' appears twice in one object", origin,
                                   parsed.template get<std::string>()));
    }
    return true;
  };
  try {
    return Json::parse(text, check);
  } catch (const typename Json::exception& e) {
    // parse_error (syntax, bad UTF-8) and out_of_range (a number beyond a double) alike.
    throw InputError(fmt::format("{}: not valid JSON: {}", origin, without_tag(e.what())));
  }
}

}  // namespace

nlohmann::json parse_json(std::string_view text, std::string_view origin) {
  return parse_strict<nlohmann::json>(text, origin);
}

nlohmann::ordered_json parse_ordered_json(std::string_view text, std::string_view origin) {
  return parse_strict<nlohmann::ordered_json>(text, origin);
}

}  // namespace convgrid
