// Parsing and validation of ConvShape: one line of comma-separated key=value pairs.
#include "convgrid/conv_shape.hpp"

#include <charconv>
#include <map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "convgrid/checked.hpp"
#include "convgrid/error.hpp"

namespace convgrid {
namespace {

constexpr int64_t kMaxExtent = int64_t{1} << 40;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int64_t parse_int(std::string_view key, std::string_view text, std::string_view whole) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range) {
    throw InputError(fmt::format("shape: {}={} is not an integer in range", key, whole));
  }
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    throw InputError(fmt::format("shape: {}={} is not an integer", key, whole));
  }
  if (v < 0 || v > kMaxExtent) {
    throw InputError(fmt::format("shape: {}={} is out of range [0, 2^40]", key, whole));
  }
  return v;
}

// Rethrows the overflow of a derived count named with the whole shape, e.g. "shape: flops
// (2*N*K*C*Ho*Wo*R*S) overflows 64 bits (... * 31) in N=1048576,C=4194304,...".
[[noreturn]] void overflowed(const ConvShape& s, const InputError& e) {
  throw InputError(fmt::format("shape: {} in {}", e.what(), s.to_string()));
}

// "3" -> (3,3); "2x1" -> (2,1).
std::pair<int64_t, int64_t> parse_pair(std::string_view key, std::string_view value) {
  auto x = value.find('x');
  if (x == std::string_view::npos) {
    int64_t v = parse_int(key, value, value);
    return {v, v};
  }
  return {parse_int(key, value.substr(0, x), value), parse_int(key, value.substr(x + 1), value)};
}

}  // namespace

ConvShape ConvShape::parse(std::string_view text) {
  // Errors quote the text, so it must be one line: no control characters but the tab.
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      throw InputError(fmt::format(
          "shape: control character 0x{:02x} at offset {} (a shape is one line of text)", c, i));
    }
  }
  ConvShape s;
  std::map<std::string, std::string, std::less<>> kv;
  std::string_view rest = trim(text);
  if (rest.empty()) throw InputError("shape: empty shape string");
  // Every comma is followed by an item, so a trailing comma is an empty item.
  for (bool more = true; more;) {
    auto comma = rest.find(',');
    std::string_view item = trim(rest.substr(0, comma));
    more = comma != std::string_view::npos;
    if (more) rest.remove_prefix(comma + 1);
    if (item.empty()) throw InputError(fmt::format("shape: empty item in '{}'", text));
    auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      throw InputError(fmt::format("shape: '{}' is not of the form key=value", item));
    }
    std::string key(trim(item.substr(0, eq)));
    std::string value(trim(item.substr(eq + 1)));
    if (auto [it, fresh] = kv.emplace(key, value); !fresh) {
      throw InputError(fmt::format("shape: key '{}' given twice ({}={}, {}={})", key, key,
                                   it->second, key, value));
    }
  }

  const std::vector<std::pair<const char*, int64_t*>> required = {
      {"N", &s.N}, {"C", &s.C}, {"H", &s.H}, {"W", &s.W}, {"K", &s.K}, {"R", &s.R}, {"S", &s.S}};
  for (auto& [key, field] : required) {
    auto it = kv.find(key);
    if (it == kv.end()) throw InputError(fmt::format("shape: missing key {} in '{}'", key, text));
    *field = parse_int(key, it->second, it->second);
    kv.erase(it);
  }
  bool pad_end_given = false;
  for (auto& [key, value] : kv) {
    if (key == "stride") {
      std::tie(s.stride_h, s.stride_w) = parse_pair(key, value);
    } else if (key == "pad") {
      std::tie(s.pad_top, s.pad_left) = parse_pair(key, value);
    } else if (key == "pad_end") {
      std::tie(s.pad_bottom, s.pad_right) = parse_pair(key, value);
      pad_end_given = true;
    } else if (key == "dilation") {
      std::tie(s.dil_h, s.dil_w) = parse_pair(key, value);
    } else if (key == "groups") {
      s.groups = parse_int(key, value, value);
    } else {
      throw InputError(fmt::format(
          "shape: unknown key '{}' in {}={} (known: N,C,H,W,K,R,S,stride,pad,pad_end,dilation,"
          "groups)",
          key, key, value));
    }
  }
  if (!pad_end_given) {
    s.pad_bottom = s.pad_top;
    s.pad_right = s.pad_left;
  }
  s.validate();
  return s;
}

void ConvShape::validate() const {
  const std::pair<const char*, int64_t> positive[] = {
      {"N", N},          {"C", C},          {"H", H},           {"W", W},
      {"K", K},          {"R", R},          {"S", S},           {"stride(h)", stride_h},
      {"stride(w)", stride_w}, {"dilation(h)", dil_h}, {"dilation(w)", dil_w},
      {"groups", groups}};
  for (auto [key, v] : positive) {
    if (v < 1 || v > kMaxExtent) {
      throw InputError(fmt::format("shape: {}={} must be in [1, 2^40]", key, v));
    }
  }
  const std::pair<const char*, int64_t> nonneg[] = {
      {"pad(top)", pad_top}, {"pad(left)", pad_left}, {"pad_end(bottom)", pad_bottom},
      {"pad_end(right)", pad_right}};
  for (auto [key, v] : nonneg) {
    if (v < 0 || v > kMaxExtent) {
      throw InputError(fmt::format("shape: {}={} must be in [0, 2^40]", key, v));
    }
  }
  if (C % groups != 0 || K % groups != 0) {
    throw InputError(fmt::format("shape: groups={} must divide both C={} and K={}", groups, C, K));
  }
  int64_t span_h = 0, span_w = 0;  // the dilated filter extents
  try {
    span_h = checked_add(checked_mul(dil_h, R - 1, "filter extent"), 1, "filter extent");
    span_w = checked_add(checked_mul(dil_w, S - 1, "filter extent"), 1, "filter extent");
  } catch (const InputError& e) {
    overflowed(*this, e);
  }
  const int64_t padded_h = H + pad_top + pad_bottom;
  const int64_t padded_w = W + pad_left + pad_right;
  if (span_h > padded_h) {
    throw InputError(fmt::format("shape: filter R={} (dilated extent {}) is taller than the padded "
                                 "input H+pads={}",
                                 R, span_h, padded_h));
  }
  if (span_w > padded_w) {
    throw InputError(fmt::format("shape: filter S={} (dilated extent {}) is wider than the padded "
                                 "input W+pads={}",
                                 S, span_w, padded_w));
  }
  if (pad_top >= span_h || pad_bottom >= span_h || pad_left >= span_w || pad_right >= span_w) {
    // Padding as wide as the filter makes output rows that read nothing but zeros.
    throw InputError(fmt::format(
        "shape: padding {}x{} (end {}x{}) must be smaller than the dilated filter extent {}x{}",
        pad_top, pad_left, pad_bottom, pad_right, span_h, span_w));
  }
  try {
    checked_product({N, C, H, W, 4}, "input bytes (N*C*H*W*4)");
    checked_product({K, C, R, S, 4}, "weight bytes (K*C*R*S*4)");
    checked_product({N, K, Ho(), Wo(), 4}, "output bytes (N*K*Ho*Wo*4)");
    checked_product({N, K, C, Ho(), Wo(), R, S, 2}, "flops (2*N*K*C*Ho*Wo*R*S)");  // >= grouped
  } catch (const InputError& e) {
    overflowed(*this, e);
  }
}

std::string ConvShape::to_string() const {
  std::string s = fmt::format("N={},C={},H={},W={},K={},R={},S={}", N, C, H, W, K, R, S);
  auto pair = [](int64_t a, int64_t b) {
    return a == b ? fmt::format("{}", a) : fmt::format("{}x{}", a, b);
  };
  if (stride_h != 1 || stride_w != 1) s += ",stride=" + pair(stride_h, stride_w);
  if (pad_top != 0 || pad_left != 0) s += ",pad=" + pair(pad_top, pad_left);
  if (pad_bottom != pad_top || pad_right != pad_left) s += ",pad_end=" + pair(pad_bottom, pad_right);
  if (dil_h != 1 || dil_w != 1) s += ",dilation=" + pair(dil_h, dil_w);
  if (groups != 1) s += fmt::format(",groups={}", groups);
  return s;
}

}  // namespace convgrid
