// Float32 storage for tensors and workspaces, all from one allocator that counts the current and
// peak bytes of this process, and a pool so that repeated execution of the same work allocates
// nothing (first touch of fresh memory costs about 12 us per 4 KiB page on these machines).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

namespace convgrid {

// Process-wide byte counters of every Buffer alive (pooled ones included).
class MemoryTracker {
 public:
  static int64_t current_bytes();
  static int64_t peak_bytes();
  // Restarts peak tracking from the current level (to measure one phase).
  static void reset_peak();

 private:
  friend class Buffer;
  template <class T>
  friend struct TrackedAllocator;
  static void on_alloc(int64_t bytes);
  static void on_free(int64_t bytes);
};

// A standard allocator whose bytes MemoryTracker counts: for the network's state that is not
// float tensors or not in Buffers (SGD momentum, pooling's argmax indices).
template <class T>
struct TrackedAllocator {
  using value_type = T;
  TrackedAllocator() = default;
  template <class U>
  TrackedAllocator(const TrackedAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    T* p = std::allocator<T>{}.allocate(n);
    MemoryTracker::on_alloc(static_cast<int64_t>(n * sizeof(T)));
    return p;
  }
  void deallocate(T* p, size_t n) noexcept {
    MemoryTracker::on_free(static_cast<int64_t>(n * sizeof(T)));
    std::allocator<T>{}.deallocate(p, n);
  }
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
