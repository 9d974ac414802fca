// MPI tests of the communication layer (src/comm): RAII communicators and MPI error checking,
// count conversion, every float collective with uneven and zero counts (blocking and
// non-blocking), the point-to-point exchange, and collective_check. Each collective runs on
// communicators of several sizes (the world, halves, groups of three, single ranks) and its
// TrafficCounter must equal the rule of comm/traffic.hpp exactly on every rank; the expected
// volumes are written out here by hand, not taken from comm/volume.hpp.
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <numeric>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "comm/collective_check.hpp"
#include "comm/collectives.hpp"
#include "comm/communicator.hpp"
#include "comm/exchange.hpp"
#include "comm/mpi_counts.hpp"
#include "comm/mpi_error.hpp"
#include "convgrid/error.hpp"

namespace convgrid {

// How GoogleTest prints a Traffic in a failed expectation (found by argument-dependent lookup).
void PrintTo(const Traffic& traffic, std::ostream* os) { *os << traffic.to_string(); }

namespace {

constexpr float kUntouched = -1.0f;

// The world, its halves by parity (ordered by descending rank), groups of three consecutive
// ranks, and single ranks: communicators of every size from 1 to the world's.
std::vector<Communicator> test_comms() {
  Communicator world = Communicator::world();
  std::vector<Communicator> comms;
  comms.push_back(world.split(world.rank() % 2, -world.rank()));
  comms.push_back(world.split(world.rank() / 3, world.rank()));
  comms.push_back(world.split(world.rank(), 0));
  comms.push_back(std::move(world));
  return comms;
}

// Calls f(comm, salt) for every communicator of test_comms() and every salt below `salts`.
template <class F>
void for_each_comm_and_salt(int salts, F f) {
  for (const Communicator& comm : test_comms()) {
    for (int salt = 0; salt < salts; ++salt) {
      SCOPED_TRACE(testing::Message() << "q=" << comm.size() << " salt=" << salt);
      f(comm, salt);
    }
  }
}

// Uneven part sizes from 0 to 4; `salt` varies which ranks get zero.
int64_t part_count(int rank, int salt) { return (rank * 7 + salt * 3) % 5; }

std::vector<int64_t> part_counts(int ranks, int salt) {
  std::vector<int64_t> counts(ranks);
  for (int i = 0; i < ranks; ++i) counts[i] = part_count(i, salt);
  return counts;
}

// Displacements of consecutive parts with `gap` unused words before each one.
std::vector<int64_t> displs_with_gaps(const std::vector<int64_t>& counts, int64_t gap) {
  std::vector<int64_t> displs(counts.size());
  int64_t next = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    displs[i] = next + gap;
    next = displs[i] + counts[i];
  }
  return displs;
}

int64_t end_of(const std::vector<int64_t>& counts, const std::vector<int64_t>& displs) {
  return counts.empty() ? 0 : displs.back() + counts.back();
}

int64_t sum(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}

// One collective call of `kind` receiving `words` here, on a communicator of `ranks` ranks.
Traffic one_call(CommKind kind, int ranks, int64_t words) {
  Traffic t;
  if (ranks > 1) t[kind] = {1, words};
  return t;
}

// The message of the Error `f` throws ("" when it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// ---- Communicator and errors ----------------------------------------------------------------

TEST(Communicator, WorldIsADuplicateOfMpiCommWorld) {
  int rank = 0, size = 0, compare = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  Communicator world = Communicator::world();
  EXPECT_EQ(world.rank(), rank);
  EXPECT_EQ(world.size(), size);
  MPI_Comm_compare(world.raw(), MPI_COMM_WORLD, &compare);
  EXPECT_EQ(compare, MPI_CONGRUENT);
}

TEST(Communicator, SplitOrdersByKey) {
  Communicator world = Communicator::world();
  const int P = world.size(), r = world.rank();
  Communicator half = world.split(r % 2, -r);  // same parity, descending rank
  EXPECT_EQ(half.size(), (P - r % 2 + 1) / 2);
  EXPECT_EQ(half.rank(), (P - 1 - r) / 2);  // members above r: r+2, r+4, ... up to P-1
}

// Member lists of every shape subgroup turns into runs: all ranks, every other rank, a
// descending list, an irregular one (runs of one and of two), and a rank alone. Every member
// gets the rank of its place in the list, and the group is exactly the list.
TEST(Communicator, SubgroupKeepsTheMembersInTheirOrder) {
  Communicator world = Communicator::world();
  const int P = world.size(), r = world.rank();
  std::vector<std::vector<int>> lists(5);
  for (int i = 0; i < P; ++i) lists[0].push_back(i);
  for (int i = r % 2; i < P; i += 2) lists[1].push_back(i);
  for (int i = P - 1; i >= 0; --i) lists[2].push_back(i);
  for (int i : {0, 2, 3, 5, 6, 7, 9, 10, P - 1}) {
    if (i < P && (lists[3].empty() || i > lists[3].back())) lists[3].push_back(i);
  }
  lists[4] = {r};
  for (size_t l = 0; l < lists.size(); ++l) {
    const std::vector<int>& members = lists[l];
    const auto place = std::find(members.begin(), members.end(), r);
    if (place == members.end()) continue;  // not a member: MPI_Comm_create_group is the members' alone
    Communicator part = world.subgroup(members, 100 + static_cast<int>(l));
    ASSERT_EQ(part.size(), static_cast<int>(members.size())) << "list " << l;
    EXPECT_EQ(part.rank(), place - members.begin()) << "list " << l;
    MPI_Group world_group = MPI_GROUP_NULL, part_group = MPI_GROUP_NULL;
    MPI_Comm_group(world.raw(), &world_group);
    MPI_Comm_group(part.raw(), &part_group);
    std::vector<int> in_part(members.size()), in_world(members.size());
    std::iota(in_part.begin(), in_part.end(), 0);
    MPI_Group_translate_ranks(part_group, static_cast<int>(members.size()), in_part.data(), world_group,
                              in_world.data());
    EXPECT_EQ(in_world, members) << "list " << l;
    MPI_Group_free(&part_group);
    MPI_Group_free(&world_group);
  }
}

TEST(Communicator, MoveTransfersOwnership) {
  Communicator a = Communicator::world();
  const MPI_Comm handle = a.raw();
  Communicator b = std::move(a);
  EXPECT_EQ(a.raw(), MPI_COMM_NULL);
  EXPECT_EQ(b.raw(), handle);
  a = std::move(b);
  EXPECT_EQ(a.raw(), handle);
  EXPECT_EQ(MPI_Barrier(a.raw()), MPI_SUCCESS);
}

TEST(Communicator, FailingMpiCallThrowsErrorNamingTheCall) {
  Communicator world = Communicator::world();
  float x = 0;
  // An invalid root returns an error code (MPI_ERRORS_RETURN) instead of aborting the job.
  const std::string message = error_of(
      [&] { check_mpi(MPI_Bcast(&x, 1, MPI_FLOAT, world.size() + 3, world.raw()), "MPI_Bcast"); });
  EXPECT_NE(message.find("MPI_Bcast failed: "), std::string::npos) << message;
  // MPI's own string for the code: "MPI_ERR_ROOT: invalid root" (Open MPI), "MPI_ERR_ROOT" (SMPI).
  EXPECT_NE(message.find("ROOT"), std::string::npos) << message;
  EXPECT_NO_THROW(check_mpi(MPI_SUCCESS, "MPI_Barrier"));
}

TEST(MpiCounts, CountsMustFitInInt) {
  EXPECT_EQ(to_mpi_count(INT_MAX, "n"), INT_MAX);
  EXPECT_EQ(to_mpi_count(0, "n"), 0);
  const std::string big = error_of([] { to_mpi_count(int64_t{1} << 31, "all_reduce_sum count"); });
  EXPECT_NE(big.find("all_reduce_sum count is 2147483648"), std::string::npos) << big;
  EXPECT_THROW(to_mpi_count(-1, "n"), Error);
}

TEST(MpiCounts, PartsMustMatchRanksAndLieInTheBuffer) {
  const std::vector<int64_t> counts{2, 0, 3}, displs{0, 2, 2};
  const MpiParts parts = to_mpi_parts(counts, displs, 3, 5, "buf");
  EXPECT_EQ(parts.counts, (std::vector<int>{2, 0, 3}));
  EXPECT_EQ(parts.displs, (std::vector<int>{0, 2, 2}));
  EXPECT_THROW(to_mpi_parts(counts, displs, 3, 4, "buf"), Error);  // last part ends at 5
  EXPECT_THROW(to_mpi_parts(counts, displs, 4, 5, "buf"), Error);  // 3 counts for 4 ranks
  const std::vector<int64_t> two{0, 2}, negative{0, -1, 2};
  EXPECT_THROW(to_mpi_parts(counts, two, 3, 5, "buf"), Error);  // 2 displacements for 3 ranks
  EXPECT_THROW(to_mpi_parts(counts, negative, 3, 5, "buf"), Error);
}

TEST(Collectives, BadArgumentsThrowBeforeMpiIsCalled) {
  for (const Communicator& comm : test_comms()) {
    TrafficCounter traffic;
    const int q = comm.size();
    std::vector<int64_t> counts(q + 1, 1), displs(q + 1, 0);  // one entry too many on every rank
    std::vector<float> buffer(q + 1);
    EXPECT_THROW(all_gather_v(comm, std::span(buffer).first(1), buffer, counts, displs, traffic),
                 Error);
    EXPECT_THROW(reduce_scatter(comm, buffer, std::span(buffer).first(1), counts, traffic), Error);
    EXPECT_THROW(broadcast(comm, buffer, q, traffic), Error);
    const RecvMessage outside{q, buffer.data(), 1};
    EXPECT_THROW(exchange(comm, {}, std::span(&outside, 1), traffic), Error);
    EXPECT_EQ(traffic.traffic(), Traffic{});
  }
}

// ---- all-gather ---------------------------------------------------------------------------

struct AllGatherCase {
  std::vector<int64_t> counts, displs;
  std::vector<float> send;
  int64_t recv_size = 0;
};

// Rank i contributes part_count(i, salt) words i*1000 + j, placed after a gap of one word.
AllGatherCase all_gather_case(const Communicator& comm, int salt) {
  AllGatherCase c{part_counts(comm.size(), salt), {}, {}, 0};
  c.displs = displs_with_gaps(c.counts, 1);
  c.recv_size = end_of(c.counts, c.displs);
  for (int64_t j = 0; j < c.counts[comm.rank()]; ++j) c.send.push_back(comm.rank() * 1000.0f + j);
  return c;
}

TEST(Collectives, AllGatherVUnevenCounts) {
  for_each_comm_and_salt(3, [](const Communicator& comm, int salt) {
    const AllGatherCase c = all_gather_case(comm, salt);
    std::vector<float> recv(c.recv_size, kUntouched);
    TrafficCounter traffic;
    all_gather_v(comm, c.send, recv, c.counts, c.displs, traffic);

    std::vector<float> expected(c.recv_size, kUntouched);
    for (int i = 0; i < comm.size(); ++i)
      for (int64_t j = 0; j < c.counts[i]; ++j) expected[c.displs[i] + j] = i * 1000.0f + j;
    EXPECT_EQ(recv, expected);
    EXPECT_EQ(traffic.traffic(),
              one_call(CommKind::all_gather, comm.size(), sum(c.counts) - c.counts[comm.rank()]));
  });
}

TEST(Collectives, AllGatherVAsyncEqualsBlocking) {
  for_each_comm_and_salt(3, [](const Communicator& comm, int salt) {
    const AllGatherCase c = all_gather_case(comm, salt);
    std::vector<float> blocking(c.recv_size, kUntouched), waited = blocking, tested = blocking,
                                                          dropped = blocking;
    TrafficCounter t_blocking, t_async;
    all_gather_v(comm, c.send, blocking, c.counts, c.displs, t_blocking);

    Request r = all_gather_v_async(comm, c.send, waited, c.counts, c.displs, t_async);
    EXPECT_EQ(t_async.traffic(), t_blocking.traffic());  // counted when posted
    r.wait();
    EXPECT_FALSE(r.pending());

    Request s = all_gather_v_async(comm, c.send, tested, c.counts, c.displs, t_async);
    while (!s.test()) {
    }
    EXPECT_FALSE(s.pending());

    { Request unwaited = all_gather_v_async(comm, c.send, dropped, c.counts, c.displs, t_async); }

    EXPECT_EQ(waited, blocking);
    EXPECT_EQ(tested, blocking);
    EXPECT_EQ(dropped, blocking);  // the destructor waited
    Traffic thrice;
    thrice[CommKind::all_gather] = {3 * t_blocking.traffic()[CommKind::all_gather].messages,
                                    3 * t_blocking.traffic()[CommKind::all_gather].words};
    EXPECT_EQ(t_async.traffic(), thrice);
  });
}

// ---- reduce-scatter -----------------------------------------------------------------------

struct ReduceScatterCase {
  std::vector<int64_t> counts;
  std::vector<float> send, expected;
};

// Rank r sends (r+1) * (g%7 + 1) at global index g; the sums are small integers, exact in float.
// Parts of 0 to 4 words, or `base` more each.
ReduceScatterCase reduce_scatter_case(const Communicator& comm, int salt, int64_t base = 0) {
  const int q = comm.size(), me = comm.rank();
  ReduceScatterCase c{part_counts(q, salt), {}, {}};
  for (int64_t& n : c.counts) n += base;
  const int64_t total = sum(c.counts);
  const int64_t first = std::accumulate(c.counts.begin(), c.counts.begin() + me, int64_t{0});
  for (int64_t g = 0; g < total; ++g) c.send.push_back((me + 1.0f) * (g % 7 + 1));
  for (int64_t j = 0; j < c.counts[me]; ++j) {
    c.expected.push_back(q * (q + 1) / 2.0f * ((first + j) % 7 + 1));
  }
  return c;
}

// The reduce-scatter of reduce_scatter_case(comm, salt, base): the sums, and the words counted.
void expect_reduce_scatter_sums(const Communicator& comm, int salt, int64_t base) {
  const ReduceScatterCase c = reduce_scatter_case(comm, salt, base);
  std::vector<float> recv(c.expected.size(), kUntouched);
  TrafficCounter traffic;
  reduce_scatter(comm, c.send, recv, c.counts, traffic);
  EXPECT_EQ(recv, c.expected);
  EXPECT_EQ(traffic.traffic(), one_call(CommKind::reduce_scatter, comm.size(),
                                        (comm.size() - 1) * c.counts[comm.rank()]));
}

TEST(Collectives, ReduceScatterUnevenCounts) {
  for_each_comm_and_salt(3, [](const Communicator& comm, int salt) { expect_reduce_scatter_sums(comm, salt, 0); });
}

// Parts of 100 to 104 words: every algorithm of Open MPI's table but the smallest, by
// communicator size (recursive halving over 16 ranks, the butterfly over 32 and 64 under SMPI).
TEST(Collectives, ReduceScatterLargerUnevenCounts) {
  for_each_comm_and_salt(2, [](const Communicator& comm, int salt) { expect_reduce_scatter_sums(comm, salt, 100); });
}

TEST(Collectives, ReduceScatterAsyncEqualsBlocking) {
  for_each_comm_and_salt(3, [](const Communicator& comm, int salt) {
    const ReduceScatterCase c = reduce_scatter_case(comm, salt);
    std::vector<float> blocking(c.expected.size(), kUntouched), async = blocking;
    TrafficCounter t_blocking, t_async;
    reduce_scatter(comm, c.send, blocking, c.counts, t_blocking);
    Request r = reduce_scatter_async(comm, c.send, async, c.counts, t_async);
    Request moved = std::move(r);
    EXPECT_FALSE(r.pending());
    moved.wait();
    EXPECT_EQ(async, blocking);
    EXPECT_EQ(t_async.traffic(), t_blocking.traffic());
  });
}

TEST(Request, DefaultIsComplete) {
  Request r;
  EXPECT_FALSE(r.pending());
  EXPECT_TRUE(r.test());
  r.wait();
}

// ---- all-to-all, all-reduce, broadcast ----------------------------------------------------

// Words rank `from` sends to rank `to`: 0 to 3.
int64_t a2a_count(int from, int to, int salt) { return (from * 3 + to * 5 + salt) % 4; }
float a2a_value(int from, int to, int64_t j) { return from * 10000.0f + to * 100.0f + j; }

TEST(Collectives, AllToAllVUnevenCounts) {
  for_each_comm_and_salt(4, [](const Communicator& comm, int salt) {
    const int q = comm.size(), me = comm.rank();
    std::vector<int64_t> send_counts(q), recv_counts(q);
    for (int i = 0; i < q; ++i) {
      send_counts[i] = a2a_count(me, i, salt);
      recv_counts[i] = a2a_count(i, me, salt);
    }
    const std::vector<int64_t> send_displs = displs_with_gaps(send_counts, 1);
    const std::vector<int64_t> recv_displs = displs_with_gaps(recv_counts, 2);
    std::vector<float> send(end_of(send_counts, send_displs), kUntouched);
    std::vector<float> recv(end_of(recv_counts, recv_displs), kUntouched), expected = recv;
    for (int i = 0; i < q; ++i) {
      for (int64_t j = 0; j < send_counts[i]; ++j) send[send_displs[i] + j] = a2a_value(me, i, j);
      for (int64_t j = 0; j < recv_counts[i]; ++j)
        expected[recv_displs[i] + j] = a2a_value(i, me, j);
    }
    TrafficCounter traffic;
    all_to_all_v(comm, send, send_counts, send_displs, recv, recv_counts, recv_displs, traffic);
    EXPECT_EQ(recv, expected);
    EXPECT_EQ(traffic.traffic(),
              one_call(CommKind::all_to_all, q, sum(recv_counts) - recv_counts[me]));
  });
}

// A rank's part for itself is a local copy: its send and receive sizes must agree, and a
// mismatch is refused on that rank before any message is posted.
TEST(Collectives, AllToAllVRefusesMismatchedSelfPart) {
  const Communicator self = Communicator::world().split(Communicator::world().rank(), 0);
  std::vector<float> send(2, 1.0f), recv(3, kUntouched);
  const std::vector<int64_t> send_counts{2}, recv_counts{3}, displs{0};
  TrafficCounter traffic;
  EXPECT_THROW(all_to_all_v(self, send, send_counts, displs, recv, recv_counts, displs, traffic),
               Error);
}

TEST(Collectives, AllReduceSumCountsReduceScatterPlusAllGather) {
  for (const Communicator& comm : test_comms()) {
    const int q = comm.size(), me = comm.rank();
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{5}, int64_t{3} * q + 2}) {
      SCOPED_TRACE(testing::Message() << "q=" << q << " n=" << n);
      std::vector<float> data(n), expected(n);
      for (int64_t j = 0; j < n; ++j) {
        data[j] = (me + 1.0f) * (j + 1);
        expected[j] = q * (q + 1) / 2.0f * (j + 1);
      }
      TrafficCounter traffic;
      all_reduce_sum(comm, data, traffic);
      EXPECT_EQ(data, expected);
      // Balanced slice of this rank: n/q, one more for the first n%q ranks.
      const int64_t s = n / q + (me < n % q ? 1 : 0);
      EXPECT_EQ(traffic.traffic(), one_call(CommKind::all_reduce, q, (q - 1) * s + (n - s)));
    }
  }
}

TEST(Collectives, BroadcastCountsOncePerReceiver) {
  for (const Communicator& comm : test_comms()) {
    const int q = comm.size(), me = comm.rank(), root = q - 1;
    SCOPED_TRACE(testing::Message() << "q=" << q);
    std::vector<float> data(6, kUntouched), expected(6);
    for (int j = 0; j < 6; ++j) {
      expected[j] = root * 1000.0f + j;
      if (me == root) data[j] = expected[j];
    }
    TrafficCounter traffic;
    broadcast(comm, data, root, traffic);
    EXPECT_EQ(data, expected);
    EXPECT_EQ(traffic.traffic(), one_call(CommKind::broadcast, q, me == root ? 0 : 6));
  }
}

TEST(Traffic, DescribesKindsWithMessages) {
  Traffic t;
  EXPECT_EQ(t.to_string(), "nothing");
  t[CommKind::reduce_scatter] = {1, 0};
  t[CommKind::all_gather] = {2, 340};
  EXPECT_EQ(t.to_string(), "all_gather 2 messages 340 words, reduce_scatter 1 message 0 words");
}

TEST(Collectives, CountersAccumulateAcrossKindsAndReset) {
  Communicator world = Communicator::world();
  const int q = world.size();
  std::vector<float> data(4, 1.0f);
  TrafficCounter traffic;
  all_reduce_sum(world, data, traffic);
  broadcast(world, data, 0, traffic);
  const int64_t s = 4 / q + (world.rank() < 4 % q ? 1 : 0);
  const int64_t words = (q - 1) * s + (4 - s) + (world.rank() == 0 ? 0 : 4);
  EXPECT_EQ(traffic.traffic().messages(), q > 1 ? 2 : 0);
  EXPECT_EQ(traffic.traffic().words(), q > 1 ? words : 0);
  traffic.reset();
  EXPECT_EQ(traffic.traffic(), Traffic{});
}

// ---- point-to-point exchange --------------------------------------------------------------

// Words of the first message from `from` to the rank `d` after it: 0 to 3.
int64_t first_count(int from, int d) { return (from * 3 + d) % 4; }
float p2p_value(int from, int d, int message, int64_t j) {
  return from * 10000.0f + d * 1000.0f + message * 100.0f + j;
}

TEST(Exchange, SeveralPeersTwoMessagesEachAndEmptyOnes) {
  for (const Communicator& comm : test_comms()) {
    const int q = comm.size(), me = comm.rank();
    SCOPED_TRACE(testing::Message() << "q=" << q);
    // To the rank d after it (d = 1..3, below q), each rank sends two messages: first_count(me, d)
    // words, then d words; both are received in that order from the rank d before it.
    std::vector<std::vector<float>> out, in, expected;
    out.reserve(6);  // the messages point into these buffers: no reallocation
    in.reserve(6);
    std::vector<SendMessage> sends;
    std::vector<RecvMessage> recvs;
    Traffic want;
    KindTraffic& want_p2p = want[CommKind::point_to_point];
    for (int d = 1; d < std::min(q, 4); ++d) {
      const int to = (me + d) % q, from = (me - d + q) % q;
      for (int m = 0; m < 2; ++m) {
        const int64_t n_out = m == 0 ? first_count(me, d) : d;
        const int64_t n_in = m == 0 ? first_count(from, d) : d;
        out.emplace_back();
        for (int64_t j = 0; j < n_out; ++j) out.back().push_back(p2p_value(me, d, m, j));
        expected.emplace_back();
        for (int64_t j = 0; j < n_in; ++j) expected.back().push_back(p2p_value(from, d, m, j));
        in.emplace_back(n_in, kUntouched);
        sends.push_back({to, out.back().data(), n_out});
        recvs.push_back({from, in.back().data(), n_in});
        if (n_in > 0) want_p2p = {want_p2p.messages + 1, want_p2p.words + n_in};
      }
    }
    // Empty messages no peer matches: skipped, or this would hang.
    sends.push_back({0, nullptr, 0});
    recvs.push_back({q - 1, nullptr, 0});

    TrafficCounter traffic;
    exchange(comm, sends, recvs, traffic);
    EXPECT_EQ(in, expected);
    EXPECT_EQ(traffic.traffic(), want);
  }
}

// ---- collective_check ---------------------------------------------------------------------

// The message of the InputError collective_check throws ("" when it throws none).
std::string check_message(const Communicator& comm, bool ok, const std::string& message) {
  try {
    collective_check(comm, ok, message);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(CollectiveCheck, PassesWhenEveryRankSucceeds) {
  for (const Communicator& comm : test_comms()) {
    EXPECT_EQ(check_message(comm, true, "ignored"), "");
  }
}

TEST(CollectiveCheck, EveryRankThrowsTheLowestFailingRanksMessage) {
  for (const Communicator& comm : test_comms()) {
    const int q = comm.size(), me = comm.rank();
    SCOPED_TRACE(testing::Message() << "q=" << q);
    // Odd ranks and the last rank fail; messages of different lengths.
    auto message_of = [](int rank) {
      return "bad region on rank " + std::to_string(rank) + std::string(rank * 50, '!');
    };
    const bool ok = !(me % 2 == 1 || me == q - 1);
    const int lowest = q == 1 ? 0 : 1;
    EXPECT_EQ(check_message(comm, ok, message_of(me)), message_of(lowest));
    // Only the last rank fails.
    EXPECT_EQ(check_message(comm, me != q - 1, message_of(me)), message_of(q - 1));
  }
}

}  // namespace
}  // namespace convgrid
