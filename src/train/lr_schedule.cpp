// Warm-up, cosine and step learning-rate schedules (see lr_schedule.hpp).
#include "train/lr_schedule.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>
#include <utility>

#include "convgrid/error.hpp"

namespace convgrid {

namespace {

constexpr std::array<std::pair<LrKind, std::string_view>, 3> kKindNames = {
    {{LrKind::constant, "constant"}, {LrKind::cosine, "cosine"}, {LrKind::steps, "steps"}}};

}  // namespace

LrKind parse_lr_kind(std::string_view s) {
  for (const auto& [kind, name] : kKindNames) {
    if (s == name) return kind;
  }
  throw InputError(
      fmt::format("learning-rate schedule '{}': expected constant, cosine or steps", s));
}

std::string_view to_string(LrKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "?";
}

void validate(const LrScheduleOptions& options, int64_t epochs) {
  const double w = options.warmup_epochs;
  if (!std::isfinite(w) || w < 0) {
    throw InputError(fmt::format("warm-up {} epochs: must be 0 or more", w));
  }
  if (w > static_cast<double>(epochs)) {
    throw InputError(
        fmt::format("warm-up {} epochs is longer than the run of {} epochs", w, epochs));
  }
  const std::vector<int64_t>& m = options.milestones;
  if (!m.empty() && options.kind != LrKind::steps) {
    throw InputError(fmt::format("milestones {} are for the steps schedule, not {}",
                                 fmt::join(m, ","), to_string(options.kind)));
  }
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] < 1) {
      throw InputError(fmt::format("milestone {}: must be an epoch of 1 or more", m[i]));
    }
    if (i > 0 && m[i] <= m[i - 1]) {
      throw InputError(fmt::format("milestones {}: not strictly increasing ({} after {})",
                                   fmt::join(m, ","), m[i], m[i - 1]));
    }
  }
  if (!std::isfinite(options.gamma) || options.gamma <= 0) {
    throw InputError(fmt::format("gamma {}: must be positive and finite", options.gamma));
  }
}

LrSchedule::LrSchedule(double base_lr, LrScheduleOptions options, int64_t steps_per_epoch,
                       int64_t epochs)
    : base_(base_lr),
      options_(std::move(options)),
      steps_per_epoch_(steps_per_epoch),
      epochs_(epochs) {
  if (steps_per_epoch_ < 1 || epochs_ < 1) {
    throw InputError(
        fmt::format("learning-rate schedule over {} epochs of {} steps: both must be at least 1",
                    epochs_, steps_per_epoch_));
  }
  validate(options_, epochs_);
  warmup_ = static_cast<int64_t>(
      std::floor(options_.warmup_epochs * static_cast<double>(steps_per_epoch_) + 0.5));
}

double LrSchedule::main_factor(int64_t step) const {
  switch (options_.kind) {
    case LrKind::constant:
      return 1.0;
    case LrKind::cosine: {
      if (step < warmup_) return 1.0;
      const double t = static_cast<double>(step - warmup_);
      const double span = static_cast<double>(total_steps() - warmup_);
      return (1.0 + std::cos(std::numbers::pi * t / span)) / 2.0;
    }
    case LrKind::steps: {
      const int64_t epoch = step / steps_per_epoch_;
      const std::vector<int64_t>& m = options_.milestones;
      const auto k = std::upper_bound(m.begin(), m.end(), epoch) - m.begin();
      return std::pow(options_.gamma, static_cast<double>(k));
    }
  }
  return 1.0;
}

double LrSchedule::factor(int64_t step) const {
  const double warm =
      step < warmup_ ? static_cast<double>(step + 1) / static_cast<double>(warmup_) : 1.0;
  return warm * main_factor(step);
}

}  // namespace convgrid
