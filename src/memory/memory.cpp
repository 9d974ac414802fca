// The counting allocator behind every Buffer, and the buffer pool.
#include "convgrid/memory.hpp"

#include <algorithm>
#include <unistd.h>
#include <utility>

#include <fmt/format.h>

#include "convgrid/checked.hpp"
#include "convgrid/error.hpp"
#include "sim/allocation.hpp"
#include "sim/rank_state.hpp"

namespace convgrid {

// The counters are the rank's (sim/rank_state.hpp): one per process under Open MPI, one per
// simulated rank under SMPI.
int64_t MemoryTracker::current_bytes() { return sim::rank_state().current_bytes.load(); }
int64_t MemoryTracker::peak_bytes() { return sim::rank_state().peak_bytes.load(); }
void MemoryTracker::reset_peak() {
  sim::RankState& r = sim::rank_state();
  r.peak_bytes.store(r.current_bytes.load());
}

void MemoryTracker::on_alloc(int64_t bytes) {
  sim::RankState& r = sim::rank_state();
  int64_t now = r.current_bytes.fetch_add(bytes) + bytes;
  int64_t peak = r.peak_bytes.load();
  while (now > peak && !r.peak_bytes.compare_exchange_weak(peak, now)) {
  }
}
void MemoryTracker::on_free(int64_t bytes) { sim::rank_state().current_bytes.fetch_sub(bytes); }

Buffer::Buffer(int64_t elems) {
  if (elems < 0) throw Error(fmt::format("buffer of {} elements requested", elems));
  if (elems == 0) return;
  int64_t bytes = checked_mul(elems, static_cast<int64_t>(sizeof(float)), "buffer bytes");
  // Beyond physical memory an allocation may still succeed (overcommit) and the process then be
  // killed while touching it: refuse it with a message instead.
  static const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  if (physical > 0 && bytes > physical - MemoryTracker::current_bytes()) {
    throw Error(fmt::format("out of memory: a buffer of {} bytes does not fit in this machine's {} "
                            "bytes (the process holds {} bytes)",
                            bytes, physical, MemoryTracker::current_bytes()));
  }
  void* p = sim::allocate_buffer_bytes(static_cast<size_t>(bytes));
  if (p == nullptr) {
    throw Error(fmt::format("out of memory allocating {} bytes (process holds {} bytes)", bytes,
                            MemoryTracker::current_bytes()));
  }
  data_ = static_cast<float*>(p);
  size_ = elems;
  MemoryTracker::on_alloc(this->bytes());
}

Buffer::~Buffer() {
  if (data_ != nullptr) {
    MemoryTracker::on_free(bytes());
    sim::free_buffer_bytes(data_, static_cast<size_t>(bytes()));
  }
}

Buffer::Buffer(Buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    Buffer dead(std::move(*this));
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void Buffer::fill(float v) { std::fill(data_, data_ + size_, v); }

Buffer BufferPool::acquire(int64_t elems) {
  auto it = free_.lower_bound(elems);
  if (it != free_.end()) {
    Buffer b = std::move(it->second);
    free_.erase(it);
    return b;
  }
  return Buffer(elems);
}

void BufferPool::release(Buffer&& b) {
  if (b.size() > 0) free_.emplace(b.size(), std::move(b));
}

int64_t BufferPool::kept_bytes() const {
  int64_t sum = 0;
  for (auto& [n, b] : free_) sum += b.bytes();
  return sum;
}

}  // namespace convgrid
