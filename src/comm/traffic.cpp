// Per-rank communication accounting (the message rule is documented in traffic.hpp).
#include "comm/traffic.hpp"

#include <fmt/format.h>

namespace convgrid {

std::string_view name(CommKind kind) {
  switch (kind) {
    case CommKind::all_gather:
      return "all_gather";
    case CommKind::reduce_scatter:
      return "reduce_scatter";
    case CommKind::point_to_point:
      return "point_to_point";
    case CommKind::all_to_all:
      return "all_to_all";
    case CommKind::all_reduce:
      return "all_reduce";
    case CommKind::broadcast:
      return "broadcast";
  }
  return "unknown";
}

int64_t Traffic::messages() const {
  int64_t total = 0;
  for (const KindTraffic& t : by_kind) total += t.messages;
  return total;
}

int64_t Traffic::words() const {
  int64_t total = 0;
  for (const KindTraffic& t : by_kind) total += t.words;
  return total;
}

std::string Traffic::to_string() const {
  std::string text;
  for (int i = 0; i < kCommKindCount; ++i) {
    const KindTraffic& t = by_kind[i];
    if (t.messages == 0) continue;
    text += fmt::format("{}{} {} message{} {} words", text.empty() ? "" : ", ",
                        name(static_cast<CommKind>(i)), t.messages, t.messages == 1 ? "" : "s",
                        t.words);
  }
  return text.empty() ? "nothing" : text;
}

void TrafficCounter::collective(CommKind kind, int ranks, int64_t words) {
  if (ranks <= 1) return;
  KindTraffic& t = traffic_[kind];
  t.messages += 1;
  t.words += words;
}

void TrafficCounter::receive(int64_t words) {
  if (words <= 0) return;
  KindTraffic& t = traffic_[CommKind::point_to_point];
  t.messages += 1;
  t.words += words;
}

}  // namespace convgrid
