// Run-wise copies between packed messages and dense storage. Every routine lists its runs as
// (source offset, destination offset, length) and RunMover merges the runs that continue each
// other in both arrays (whole rows of whole planes, say) into one copy or sum.
#include "layout/pack.hpp"

#include <algorithm>

#include "kernel/vector_loops.hpp"

namespace convgrid {
namespace {

class RunMover {
 public:
  RunMover(const float* src, float* dst, bool add) : src_(src), dst_(dst), add_(add) {}
  RunMover(const RunMover&) = delete;
  RunMover& operator=(const RunMover&) = delete;

  void operator()(int64_t from, int64_t to, int64_t n) {
    if (n_ > 0 && from == from_ + n_ && to == to_ + n_) {
      n_ += n;
      return;
    }
    flush();
    from_ = from;
    to_ = to;
    n_ = n;
  }
  // Moves the pending run; call once the last run is listed.
  void flush() {
    if (n_ == 0) return;
    const float* s = src_ + from_;
    float* d = dst_ + to_;
    if (add_) {
      add_into(d, s, n_);
    } else {
      std::copy(s, s + n_, d);
    }
    n_ = 0;
  }

 private:
  const float* src_;
  float* dst_;
  bool add_;
  int64_t from_ = 0, to_ = 0, n_ = 0;
};

}  // namespace

int64_t pack_box(const Slice& region, const ReadPixels* read, const Box4& src_box,
                 const float* src, float* out) {
  RunMover move(src, out, false);
  int64_t n = 0;
  for_each_read_run(region, read, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t) {
    move(src_box.offset(a, b, y, x0), n, x1 - x0);
    n += x1 - x0;
  });
  move.flush();
  return n;
}

int64_t pack_slice(const Slice& region, const ReadPixels* read, const float* src, float* out) {
  RunMover move(src, out, false);
  int64_t n = 0;
  for_each_read_run(region, read, [&](int64_t, int64_t, int64_t, int64_t x0, int64_t x1, int64_t off) {
    move(off, n, x1 - x0);
    n += x1 - x0;
  });
  move.flush();
  return n;
}

int64_t unpack_box(const Slice& region, const ReadPixels* read, const float* in,
                   const Box4& dst_box, float* dst, bool add) {
  RunMover move(in, dst, add);
  int64_t n = 0;
  for_each_read_run(region, read, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t) {
    move(n, dst_box.offset(a, b, y, x0), x1 - x0);
    n += x1 - x0;
  });
  move.flush();
  return n;
}

int64_t unpack_slice(const Slice& region, const ReadPixels* read, const float* in, float* dst) {
  RunMover move(in, dst, false);
  int64_t n = 0;
  for_each_read_run(region, read, [&](int64_t, int64_t, int64_t, int64_t x0, int64_t x1, int64_t off) {
    move(n, off, x1 - x0);
    n += x1 - x0;
  });
  move.flush();
  return n;
}

void copy_box(const Slice& region, const ReadPixels* read, const Box4& src_box, const float* src,
              const Box4& dst_box, float* dst) {
  RunMover move(src, dst, false);
  for_each_read_run(region, read, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t) {
    move(src_box.offset(a, b, y, x0), dst_box.offset(a, b, y, x0), x1 - x0);
  });
  move.flush();
}

int64_t count_part(const Slice& region, const ReadPixels* read, const Box4& part) {
  int64_t n = 0;
  for_each_box(region, [&](const Box4& b) {
    const Box4 c = b.intersect(part);
    n += read == nullptr ? c.volume()
                         : c.extent(0) * c.extent(1) * read->rows_in(c.r[2]) * read->cols_in(c.r[3]);
  });
  return n;
}

int64_t pack_part(const Slice& region, const ReadPixels* read, const Box4& part, const float* src,
                  float* out) {
  RunMover move(src, out, false);
  int64_t n = 0;
  for_each_part_run(region, read, part, [&](int64_t, int64_t, int64_t, int64_t x0, int64_t x1, int64_t off) {
    move(off, n, x1 - x0);
    n += x1 - x0;
  });
  move.flush();
  return n;
}

int64_t unpack_part(const Slice& region, const ReadPixels* read, const Box4& part, const float* in,
                    const Box4& dst_box, float* dst, bool add) {
  RunMover move(in, dst, add);
  int64_t n = 0;
  for_each_part_run(region, read, part, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t) {
    move(n, dst_box.offset(a, b, y, x0), x1 - x0);
    n += x1 - x0;
  });
  move.flush();
  return n;
}

int64_t copy_part(const Slice& region, const ReadPixels* read, const Box4& part, const float* src,
                  const Box4& dst_box, float* dst) {
  RunMover move(src, dst, false);
  int64_t n = 0;
  for_each_part_run(region, read, part, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t off) {
    move(off, dst_box.offset(a, b, y, x0), x1 - x0);
    n += x1 - x0;
  });
  move.flush();
  return n;
}

void add_box_into_slice(const Slice& region, const Box4& part, const Box4& src_box, const float* src,
                        float* dst) {
  RunMover move(src, dst, true);
  for_each_part_run(region, nullptr, part, [&](int64_t a, int64_t b, int64_t y, int64_t x0, int64_t x1, int64_t off) {
    move(src_box.offset(a, b, y, x0), off, x1 - x0);
  });
  move.flush();
}

int64_t unpack_part_to_slice(const Slice& region, const ReadPixels* read, const Box4& part,
                             const float* in, float* dst, bool add) {
  RunMover move(in, dst, add);
  int64_t n = 0;
  for_each_part_run(region, read, part, [&](int64_t, int64_t, int64_t, int64_t x0, int64_t x1, int64_t off) {
    move(n, off, x1 - x0);
    n += x1 - x0;
  });
  move.flush();
  return n;
}

}  // namespace convgrid
