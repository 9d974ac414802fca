// The progress display of convgrid train (see train_progress.hpp).
#include "train_progress.hpp"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace convgrid::cli {

std::string format_duration(double seconds) {
  const auto s = static_cast<int64_t>(std::llround(std::max(seconds, 0.0)));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

TrainProgress::TrainProgress(bool enabled, bool bar, int64_t epochs, int64_t every)
    : enabled_(enabled), terminal_(bar), epochs_(epochs), every_(std::max<int64_t>(every, 1)) {}

void TrainProgress::step(int64_t epoch, int64_t batch, int64_t batches, double loss,
                         double samples_per_s, int64_t batch_size) {
  if (!enabled_) return;
  const double left = samples_per_s > 0 ? (batches - batch) * batch_size / samples_per_s : 0;
  if (terminal_) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * batch / std::max<int64_t>(batches, 1));
    fmt::print("\repoch {}/{} [{}{}] {}/{} loss {:.4f} {:.0f} samples/s {} left   ", epoch, epochs_,
               std::string(filled, '='), std::string(kWidth - filled, ' '), batch, batches, loss,
               samples_per_s, format_duration(left));
    std::fflush(stdout);
    open_line_ = true;
  } else if (batch % every_ == 0 || batch == batches) {
    fmt::print("epoch {}/{} step {}/{} loss {:.4f} {:.0f} samples/s {} left\n", epoch, epochs_, batch,
               batches, loss, samples_per_s, format_duration(left));
    std::fflush(stdout);
  }
}

void TrainProgress::end_line() {
  if (open_line_) fmt::print("\n");
  open_line_ = false;
}

}  // namespace convgrid::cli
