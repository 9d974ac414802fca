// Tests of Buffer, MemoryTracker and BufferPool: byte counting, peaks, moves, zeroing, alignment
// and reuse of pooled storage. The tracker is process-wide, so every check is relative to the
// bytes held when the test starts.
#include "convgrid/memory.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <utility>

#include "convgrid/error.hpp"

namespace convgrid {
namespace {

int64_t now() { return MemoryTracker::current_bytes(); }
int64_t peak() { return MemoryTracker::peak_bytes(); }

TEST(MemoryTracker, CountsCurrentAndPeakBytes) {
  const int64_t base = now();
  MemoryTracker::reset_peak();
  EXPECT_EQ(peak(), base);
  {
    Buffer a(1000);
    EXPECT_EQ(now(), base + 4000);
    {
      Buffer b(250);
      EXPECT_EQ(now(), base + 5000);
    }
    EXPECT_EQ(now(), base + 4000);
    EXPECT_EQ(peak(), base + 5000);
  }
  EXPECT_EQ(now(), base);
  EXPECT_EQ(peak(), base + 5000);
}

TEST(MemoryTracker, ResetPeakRestartsFromCurrent) {
  const int64_t base = now();
  { Buffer a(1000); }
  Buffer held(10);
  MemoryTracker::reset_peak();
  EXPECT_EQ(peak(), base + 40);
  { Buffer b(5); }
  EXPECT_EQ(peak(), base + 60);
}

TEST(Buffer, EmptyAndInvalidSizes) {
  const int64_t base = now();
  Buffer empty(0);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.size(), 0);
  EXPECT_EQ(now(), base);
  EXPECT_EQ(Buffer().size(), 0);
  EXPECT_THROW(Buffer(-1), Error);
  EXPECT_THROW(Buffer(std::numeric_limits<int64_t>::max()), InputError);  // bytes overflow
  EXPECT_EQ(now(), base);
}

TEST(Buffer, IsZeroInitialised) {
  // Dirty a block and free it, so that the next allocation of that size may get it back.
  { Buffer(1000).fill(7.0f); }
  for (int64_t n : {1, 17, 1000, 1 << 20}) {
    Buffer b(n);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(b[i], 0.0f) << "n=" << n << " i=" << i;
  }
}

TEST(Buffer, IsAlignedTo64Bytes) {
  for (int64_t n : {1, 3, 16, 17, 1000, 12345}) {
    Buffer b(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % 64, 0u) << "n=" << n;
  }
}

TEST(Buffer, FillAndSpan) {
  Buffer b(5);
  b.fill(2.5f);
  EXPECT_EQ(b.bytes(), 20);
  ASSERT_EQ(b.span().size(), 5u);
  EXPECT_EQ(b.span().data(), b.data());
  for (float v : std::as_const(b).span()) EXPECT_EQ(v, 2.5f);
}

TEST(Buffer, MoveConstructionTransfersOwnership) {
  const int64_t base = now();
  Buffer a(10);
  a[3] = 5.0f;
  float* p = a.data();
  Buffer b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.size(), 10);
  EXPECT_EQ(b[3], 5.0f);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state
  EXPECT_EQ(a.size(), 0);        // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(now(), base + 40);
}

TEST(Buffer, MoveAssignmentFreesTheOldStorage) {
  const int64_t base = now();
  Buffer a(10);
  float* p = a.data();
  Buffer c(20);
  EXPECT_EQ(now(), base + 120);
  c = std::move(a);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.size(), 10);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(now(), base + 40);

  Buffer& alias = c;
  c = std::move(alias);  // self-move keeps the storage
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(now(), base + 40);

  a = Buffer(3);  // a moved-from buffer takes new storage
  EXPECT_EQ(a.size(), 3);
  EXPECT_EQ(now(), base + 52);
}

TEST(BufferPool, AcquireAfterReleaseReusesTheStorage) {
  const int64_t base = now();
  BufferPool pool;
  Buffer a = pool.acquire(100);
  float* p = a.data();
  EXPECT_EQ(now(), base + 400);
  pool.release(std::move(a));
  EXPECT_EQ(pool.kept_bytes(), 400);
  EXPECT_EQ(now(), base + 400);  // kept buffers still count
  Buffer b = pool.acquire(100);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(pool.kept_bytes(), 0);
  EXPECT_EQ(now(), base + 400);
}

TEST(BufferPool, HandsOutTheSmallestBufferThatFits) {
  BufferPool pool;
  Buffer b300(300), b100(100), b200(200);
  float* p300 = b300.data();
  float* p100 = b100.data();
  float* p200 = b200.data();
  pool.release(std::move(b300));
  pool.release(std::move(b100));
  pool.release(std::move(b200));
  EXPECT_EQ(pool.kept_bytes(), 2400);

  Buffer x = pool.acquire(150);
  EXPECT_EQ(x.data(), p200);
  EXPECT_EQ(x.size(), 200);
  Buffer y = pool.acquire(250);
  EXPECT_EQ(y.data(), p300);
  Buffer z = pool.acquire(100);
  EXPECT_EQ(z.data(), p100);

  const int64_t before = now();
  Buffer fresh = pool.acquire(10);  // nothing left: a new allocation
  EXPECT_EQ(fresh.size(), 10);
  EXPECT_EQ(now(), before + 40);
}

TEST(BufferPool, ClearFreesAndEmptyBuffersAreNotKept) {
  const int64_t base = now();
  BufferPool pool;
  pool.release(Buffer(100));
  pool.release(Buffer(50));
  pool.release(Buffer());
  EXPECT_EQ(pool.kept_bytes(), 600);
  EXPECT_EQ(now(), base + 600);
  pool.clear();
  EXPECT_EQ(pool.kept_bytes(), 0);
  EXPECT_EQ(now(), base);
}

TEST(BufferPool, DestroyingThePoolFreesWhatItKeeps) {
  const int64_t base = now();
  {
    BufferPool pool;
    pool.release(Buffer(100));
  }
  EXPECT_EQ(now(), base);
}

TEST(Buffer, MoreThanTheMachineHasIsAnErrorNotACrash) {
  const int64_t before = MemoryTracker::current_bytes();
  EXPECT_THROW(Buffer(int64_t{1} << 40), Error);  // 4 TiB
  EXPECT_EQ(MemoryTracker::current_bytes(), before);
}

}  // namespace
}  // namespace convgrid
