// Per-rank communication accounting: what this rank received, by kind of communication.
//
// Units: words are float elements received (4 bytes each). Volumes are logical, by the rules of
// comm/volume.hpp (SPEC section 6), not what MPI's internal algorithm moves, so that the cost
// model can predict them exactly.
//
// Messages (for the latency term), precisely:
// - a collective call over a communicator of q > 1 ranks counts one message on every member,
//   whatever it receives (a broadcast root and a rank whose received volume is zero count too);
// - a collective over a single rank counts nothing (neither message nor words);
// - a point-to-point receive counts one message when its count is > 0 (empty ones are not posted).
// A non-blocking collective is counted when it is posted.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace convgrid {

enum class CommKind {
  all_gather,
  reduce_scatter,
  point_to_point,
  all_to_all,
  all_reduce,
  broadcast
};
inline constexpr int kCommKindCount = 6;

std::string_view name(CommKind kind);  // "all_gather", "reduce_scatter", ...

struct KindTraffic {
  int64_t messages = 0;
  int64_t words = 0;
  bool operator==(const KindTraffic&) const = default;
};

// What one rank received, by kind.
struct Traffic {
  std::array<KindTraffic, kCommKindCount> by_kind{};

  KindTraffic& operator[](CommKind kind) { return by_kind[static_cast<int>(kind)]; }
  const KindTraffic& operator[](CommKind kind) const { return by_kind[static_cast<int>(kind)]; }
  int64_t messages() const;  // over all kinds
  int64_t words() const;     // over all kinds
  // "all_gather 2 messages 340 words, broadcast 1 message 6 words" (kinds with messages), or
  // "nothing".
  std::string to_string() const;
  bool operator==(const Traffic&) const = default;
};

// The accumulator the communication functions add into. One counter per pass (or per phase):
// read it with traffic(), start again with reset().
class TrafficCounter {
 public:
  // One collective call over `ranks` ranks in which this rank received `words`.
  void collective(CommKind kind, int ranks, int64_t words);
  // One point-to-point receive of `words` elements.
  void receive(int64_t words);

  const Traffic& traffic() const { return traffic_; }
  void reset() { traffic_ = {}; }

 private:
  Traffic traffic_;
};

}  // namespace convgrid
