// What `convgrid train` shows while it runs, on rank 0: a progress bar redrawn in place when
// standard output is a terminal, plain lines every `every` steps (and at the end of each epoch)
// otherwise (the caller decides which). Epoch, step, loss, samples per second and the time left in the epoch.
#pragma once

#include <cstdint>
#include <string>

namespace convgrid::cli {

class TrainProgress {
 public:
  TrainProgress(bool enabled, bool bar, int64_t epochs, int64_t every);

  void step(int64_t epoch, int64_t batch, int64_t batches, double loss, double samples_per_s,
            int64_t batch_size);
  // Ends the bar's line (terminal) before an epoch summary is printed.
  void end_line();

 private:
  bool enabled_, terminal_;
  int64_t epochs_, every_;
  bool open_line_ = false;
};

// "1:05" or "1:02:03".
std::string format_duration(double seconds);

}  // namespace convgrid::cli
