// The counting allocator behind every Buffer, its per-rank limit and scopes, and the buffer pool.
#include "convgrid/memory.hpp"

#include <algorithm>
#include <limits>
#include <new>
#include <unistd.h>
#include <utility>

#include <fmt/format.h>

#include "convgrid/checked.hpp"
#include "convgrid/error.hpp"
#include "memory/byte_sizes.hpp"
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

void MemoryTracker::set_limit(std::optional<int64_t> bytes) {
  if (bytes && *bytes < 0) throw Error(fmt::format("memory limit of {} bytes", *bytes));
  sim::rank_state().memory_limit = bytes;
}
std::optional<int64_t> MemoryTracker::limit() { return sim::rank_state().memory_limit; }

namespace {

std::string grouped(int64_t n) { return fmt::format("{}", fmt::group_digits(n)); }
std::string byte_count(int64_t n) { return grouped(n) + (n == 1 ? " byte" : " bytes"); }

// One line: what asked, for how much, what the rank holds and by how much the limit is passed.
std::string limit_exceeded(int64_t bytes, int64_t held, int64_t limit) {
  const std::string scopes = MemoryScope::open_names();
  return fmt::format("memory limit: {} asks for {} while this rank holds {}; --mem-per-rank {} "
                     "({}) would be exceeded by {}",
                     scopes.empty() ? "unnamed allocation" : scopes, byte_count(bytes),
                     grouped(held), format_bytes(limit), byte_count(limit),
                     byte_count(held - (limit - bytes)));
}

}  // namespace

void MemoryTracker::on_alloc(int64_t bytes) {
  sim::RankState& r = sim::rank_state();
  // Beyond physical memory an allocation may still succeed (overcommit) and the process then be
  // killed while touching it: refuse it with a message instead.
  static const int64_t physical = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  // Both checks are made against the level the bytes are added to, so that kernel threads
  // allocating at once cannot pass the limit together.
  int64_t held = r.current_bytes.load();
  do {
    if (r.memory_limit && bytes > *r.memory_limit - held) {
      throw Error(limit_exceeded(bytes, held, *r.memory_limit));
    }
    if (physical > 0 && bytes > physical - held) {
      throw Error(fmt::format("out of memory: a buffer of {} bytes does not fit in this machine's {} "
                              "bytes (the process holds {} bytes)",
                              bytes, physical, held));
    }
  } while (!r.current_bytes.compare_exchange_weak(held, held + bytes));
  const int64_t now = held + bytes;
  int64_t peak = r.peak_bytes.load();
  while (now > peak && !r.peak_bytes.compare_exchange_weak(peak, now)) {
  }
}
void MemoryTracker::on_free(int64_t bytes) { sim::rank_state().current_bytes.fetch_sub(bytes); }

void MemoryScope::open() {
  sim::RankState& r = sim::rank_state();
  outer_ = r.memory_scope;
  r.memory_scope = this;
}

MemoryScope::~MemoryScope() { sim::rank_state().memory_scope = outer_; }

std::string MemoryScope::open_names() {
  std::vector<const MemoryScope*> open;
  for (const MemoryScope* s = sim::rank_state().memory_scope; s != nullptr; s = s->outer_) {
    open.push_back(s);
  }
  std::string names;
  for (auto s = open.rbegin(); s != open.rend(); ++s) {
    if (!names.empty()) names += " > ";
    for (size_t i = 0; i < (*s)->count_; ++i) names += (*s)->parts_[i];
  }
  return names;
}

void* tracked_allocate(size_t n, size_t size) {
  if (size != 0 && n > std::numeric_limits<size_t>::max() / size) throw std::bad_array_new_length();
  const size_t bytes = n * size;
  MemoryTracker::on_alloc(static_cast<int64_t>(bytes));  // may refuse them: before anything is allocated
  void* p = sim::allocate_buffer_bytes(std::max<size_t>(bytes, 1));
  if (p == nullptr) {
    MemoryTracker::on_free(static_cast<int64_t>(bytes));
    throw std::bad_alloc();
  }
  return p;
}

void tracked_free(void* p, size_t bytes) noexcept {
  if (p == nullptr) return;
  MemoryTracker::on_free(static_cast<int64_t>(bytes));
  sim::free_buffer_bytes(p, std::max<size_t>(bytes, 1));
}

Buffer::Buffer(int64_t elems) {
  if (elems < 0) throw Error(fmt::format("buffer of {} elements requested", elems));
  if (elems == 0) return;
  int64_t bytes = checked_mul(elems, static_cast<int64_t>(sizeof(float)), "buffer bytes");
  MemoryTracker::on_alloc(bytes);  // throws over the limit or physical memory, counting nothing
  void* p = sim::allocate_buffer_bytes(static_cast<size_t>(bytes));
  if (p == nullptr) {
    MemoryTracker::on_free(bytes);
    throw Error(fmt::format("out of memory allocating {} bytes (process holds {} bytes)", bytes,
                            MemoryTracker::current_bytes()));
  }
  data_ = static_cast<float*>(p);
  size_ = elems;
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
