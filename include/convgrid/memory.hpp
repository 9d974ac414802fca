// Float32 storage for tensors and workspaces, all from one allocator that counts the current and
// peak bytes of this rank, and a pool so that repeated execution of the same work allocates
// nothing (first touch of fresh memory costs about 12 us per 4 KiB page on these machines).
//
// The memory limit. With a limit set (--mem-per-rank), an allocation that would take the rank's
// tracked bytes over it throws Error before anything is allocated or counted, naming what asked
// (the MemoryScopes open on the rank) and the bytes, instead of the operating system killing the
// job later. The planner keeps every plan's modelled bytes under the limit and the running code
// holds exactly those (train/training_memory.hpp), so the limit is a backstop: it fires only
// when the model is wrong or something allocates that it does not know of.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace convgrid {

// Byte counters of every Buffer and TrackedVector alive on this rank (pooled ones included),
// and the rank's limit on them.
class MemoryTracker {
 public:
  static int64_t current_bytes();
  static int64_t peak_bytes();
  // Restarts peak tracking from the current level (to measure one phase).
  static void reset_peak();
  // This rank's limit on current_bytes() (none: unlimited, the default). Set it while no other
  // thread of the rank allocates; ScopedMemoryLimit sets it for a scope.
  static void set_limit(std::optional<int64_t> bytes);
  static std::optional<int64_t> limit();

 private:
  friend class Buffer;
  friend void* tracked_allocate(size_t n, size_t size);
  friend void tracked_free(void* p, size_t bytes) noexcept;
  // Counts `bytes`, or throws Error counting nothing when they would take the rank over its
  // limit or over the machine's physical memory.
  static void on_alloc(int64_t bytes);
  static void on_free(int64_t bytes);
};

// Sets this rank's memory limit while it lives, and puts the one before back.
class ScopedMemoryLimit {
 public:
  explicit ScopedMemoryLimit(std::optional<int64_t> bytes) : before_(MemoryTracker::limit()) {
    MemoryTracker::set_limit(bytes);
  }
  ~ScopedMemoryLimit() { MemoryTracker::set_limit(before_); }
  ScopedMemoryLimit(const ScopedMemoryLimit&) = delete;
  ScopedMemoryLimit& operator=(const ScopedMemoryLimit&) = delete;

 private:
  std::optional<int64_t> before_;
};

// Names what this rank allocates while the scope lives, for the memory limit's error:
//   MemoryScope scope("layer '", layer.name(), "' (", layer.kind(), ")");
// The parts are kept as views and joined only when the limit is exceeded, so opening a scope
// costs no formatting; each part must outlive the scope (a literal, a name the caller holds: a
// temporary std::string does not compile). Scopes nest; the error names the open ones outermost
// first, "a > b". Open and close a rank's scopes on its own thread, innermost first (as RAII
// does); kernel threads' allocations are named by the scopes of the rank's thread.
class MemoryScope {
 public:
  static constexpr size_t kMaxParts = 6;

  template <class... Parts>
    requires(sizeof...(Parts) >= 1 && sizeof...(Parts) <= kMaxParts &&
             (std::is_convertible_v<Parts, std::string_view> && ...) &&
             (!std::is_same_v<std::remove_const_t<Parts>, std::string> && ...))
  explicit MemoryScope(Parts&&... parts)
      : parts_{std::string_view(parts)...}, count_(sizeof...(Parts)) {
    open();
  }
  ~MemoryScope();
  MemoryScope(const MemoryScope&) = delete;
  MemoryScope& operator=(const MemoryScope&) = delete;

  // The scopes open on this rank, outermost first, joined by " > " ("" when none).
  static std::string open_names();

 private:
  void open();

  std::array<std::string_view, kMaxParts> parts_;
  size_t count_;
  const MemoryScope* outer_ = nullptr;
};

// The storage of TrackedAllocator: `n` elements of `size` bytes, counted by MemoryTracker (which
// may refuse them before anything is allocated), 64-byte aligned, and folded like a Buffer's under
// --compute model; tracked_free releases it.
void* tracked_allocate(size_t n, size_t size);
void tracked_free(void* p, size_t bytes) noexcept;

// A standard allocator whose bytes MemoryTracker counts: for the network's state that is not
// float tensors or not in Buffers (SGD momentum, pooling's argmax indices).
template <class T>
struct TrackedAllocator {
  using value_type = T;
  TrackedAllocator() = default;
  template <class U>
  TrackedAllocator(const TrackedAllocator<U>&) noexcept {}
  T* allocate(size_t n) { return static_cast<T*>(tracked_allocate(n, sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { tracked_free(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const TrackedAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using TrackedVector = std::vector<T, TrackedAllocator<T>>;

// An owning, 64-byte aligned, zero-initialised array of floats (garbage under --compute model,
// where nothing reads it: sim/allocation.hpp). Move-only.
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(int64_t elems);
  ~Buffer();
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  float* data() { return data_; }
  const float* data() const { return data_; }
  int64_t size() const { return size_; }
  int64_t bytes() const { return size_ * static_cast<int64_t>(sizeof(float)); }
  std::span<float> span() { return {data_, static_cast<size_t>(size_)}; }
  std::span<const float> span() const { return {data_, static_cast<size_t>(size_)}; }
  float& operator[](int64_t i) { return data_[i]; }
  const float& operator[](int64_t i) const { return data_[i]; }
  void fill(float v);

 private:
  float* data_ = nullptr;
  int64_t size_ = 0;
};

// Keeps released buffers and hands them out again: acquire(n) returns the smallest free buffer
// of at least n elements (its first n are what the caller uses), or allocates one.
class BufferPool {
 public:
  Buffer acquire(int64_t elems);
  void release(Buffer&& b);
  // Frees every buffer the pool keeps.
  void clear() { free_.clear(); }
  int64_t kept_bytes() const;

 private:
  std::multimap<int64_t, Buffer> free_;
};

}  // namespace convgrid
