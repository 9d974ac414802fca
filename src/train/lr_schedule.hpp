// The learning rate of every optimiser step: a pure function of the 0-based global step s, the
// steps per epoch S, the number of epochs E and the options, so a resumed run uses the same rates.
//
// T = S * E steps in all; W = floor(warmup_epochs * S + 0.5) warm-up steps; base = SgdOptions::lr.
// lr(s) = base * f(s), f in double (the Trainer rounds lr to float for Sgd), for s in [0, T):
//   f(s) = w(s) * g(s)
//   w(s) = (s + 1) / W for s < W, else 1                          (linear warm-up: 1 at s = W - 1)
//   g(s) = 1                                                      constant
//          1 for s < W, else (1 + cos(pi * (s - W) / (T - W))) / 2  cosine
//          gamma ^ k, k = #{milestones m : m <= floor(s / S)}     steps
// Cosine is CosineAnnealingLR(T_max = T - W, eta_min = 0) per step after the warm-up: base at its
// first step, down to base * (1 + cos(pi * (T - W - 1) / (T - W))) / 2 at the last one (0 would be
// step T, one past the end). Steps is MultiStepLR(milestones, gamma) stepped per epoch: from the
// first step of 0-based epoch m on (after m epochs) the rate is multiplied by gamma once more; a
// milestone inside the warm-up lowers the rate the warm-up climbs to, one at or after E never acts.
// Constant without warm-up gives f = 1, lr = base exactly (the float base through double and back).
//
// In PyTorch the same rates come from LambdaLR(optimizer, lambda s: f(s)) with scheduler.step()
// after every optimizer.step(), and f written as above with math.floor, math.cos, math.pi and
// gamma ** k (LinearLR or CosineAnnealingLR chained compute it recursively: equal up to rounding).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace convgrid {

enum class LrKind { constant, cosine, steps };

// "constant", "cosine" or "steps"; InputError naming the string otherwise.
LrKind parse_lr_kind(std::string_view s);
std::string_view to_string(LrKind kind);

struct LrScheduleOptions {
  LrKind kind = LrKind::constant;
  double warmup_epochs = 0;         // may be fractional; 0 = no warm-up
  std::vector<int64_t> milestones;  // epochs, strictly increasing, each at least 1 (steps only)
  double gamma = 0.1;               // factor at each milestone (steps only)
};

// InputError naming the value for a negative or non-finite warm-up, a warm-up longer than the
// `epochs` of the run, milestones that are not positive and strictly increasing or that are given
// to a schedule other than steps, and a gamma that is not positive and finite.
void validate(const LrScheduleOptions& options, int64_t epochs);

class LrSchedule {
 public:
  // Validates the options (and that steps_per_epoch and epochs are at least 1).
  LrSchedule(double base_lr, LrScheduleOptions options, int64_t steps_per_epoch, int64_t epochs);

  // f(step) and base * f(step) of the formulas above, for 0-based global steps in [0, T).
  double factor(int64_t step) const;
  double lr(int64_t step) const { return base_ * factor(step); }
  int64_t warmup_steps() const { return warmup_; }
  int64_t total_steps() const { return steps_per_epoch_ * epochs_; }

 private:
  double main_factor(int64_t step) const;  // g(step)

  double base_;
  LrScheduleOptions options_;
  int64_t steps_per_epoch_, epochs_, warmup_;
};

}  // namespace convgrid
