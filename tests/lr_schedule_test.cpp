// Tests of the learning-rate schedule (train/lr_schedule.hpp): the warm-up's length and values,
// cosine and step values at the ends and at known points, monotonicity, the constant schedule's
// exact base rate (what the Trainer ran before schedules), and every validation error.
#include "train/lr_schedule.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "throws_input_error.hpp"

namespace convgrid {
namespace {

constexpr int64_t kSteps = 10, kEpochs = 3;  // T = 30 steps

LrScheduleOptions options(LrKind kind, double warmup, std::vector<int64_t> milestones = {},
                          double gamma = 0.1) {
  return {kind, warmup, std::move(milestones), gamma};
}

LrSchedule schedule(const LrScheduleOptions& o) { return LrSchedule(1.0, o, kSteps, kEpochs); }

TEST(LrSchedule, ParsesKinds) {
  for (LrKind k : {LrKind::constant, LrKind::cosine, LrKind::steps})
    EXPECT_EQ(parse_lr_kind(to_string(k)), k);
  EXPECT_TRUE(throws_input_error([] { parse_lr_kind("linear"); },
                                 {"'linear'", "constant, cosine or steps"}));
}

TEST(LrSchedule, ConstantIsTheBaseRateExactly) {
  const float base = 0.02f;
  const LrSchedule s(base, LrScheduleOptions{}, kSteps, kEpochs);
  EXPECT_EQ(s.warmup_steps(), 0);
  EXPECT_EQ(s.total_steps(), kSteps * kEpochs);
  for (int64_t i = 0; i < s.total_steps(); ++i) EXPECT_EQ(static_cast<float>(s.lr(i)), base) << i;
}

TEST(LrSchedule, WarmupStepsRoundToNearest) {
  // W = floor(warmup_epochs * S + 0.5)
  EXPECT_EQ(schedule(options(LrKind::constant, 0.24)).warmup_steps(), 2);
  EXPECT_EQ(schedule(options(LrKind::constant, 0.25)).warmup_steps(), 3);
  EXPECT_EQ(schedule(options(LrKind::constant, 0.3)).warmup_steps(), 3);
  EXPECT_EQ(schedule(options(LrKind::constant, 0.01)).warmup_steps(), 0);
  EXPECT_EQ(schedule(options(LrKind::constant, 3)).warmup_steps(), 30);
}

TEST(LrSchedule, WarmupIsLinearToTheBase) {
  const LrSchedule s(0.5, options(LrKind::constant, 0.5), kSteps, kEpochs);  // W = 5
  ASSERT_EQ(s.warmup_steps(), 5);
  for (int64_t i = 0; i < 5; ++i)
    EXPECT_DOUBLE_EQ(s.lr(i), 0.5 * static_cast<double>(i + 1) / 5.0) << i;
  EXPECT_EQ(s.lr(4), 0.5);
  for (int64_t i = 5; i < 30; ++i) EXPECT_EQ(s.lr(i), 0.5) << i;
}

TEST(LrSchedule, WarmupOverTheWholeRun) {
  const LrSchedule s = schedule(options(LrKind::cosine, 3));
  for (int64_t i = 0; i < 30; ++i)
    EXPECT_DOUBLE_EQ(s.factor(i), static_cast<double>(i + 1) / 30.0) << i;
}

TEST(LrSchedule, CosineValues) {
  const LrSchedule s = schedule(options(LrKind::cosine, 0));
  EXPECT_EQ(s.factor(0), 1.0);
  EXPECT_DOUBLE_EQ(s.factor(15), 0.5);
  EXPECT_DOUBLE_EQ(s.factor(10), 0.75);
  EXPECT_DOUBLE_EQ(s.factor(29), (1 + std::cos(std::numbers::pi * 29 / 30)) / 2);
  EXPECT_LT(s.factor(29), 0.003);
  for (int64_t i = 1; i < 30; ++i) EXPECT_LT(s.factor(i), s.factor(i - 1)) << i;
}

TEST(LrSchedule, CosineAfterWarmup) {
  const LrSchedule s = schedule(options(LrKind::cosine, 1));  // W = 10, T - W = 20
  for (int64_t i = 0; i < 10; ++i)
    EXPECT_DOUBLE_EQ(s.factor(i), static_cast<double>(i + 1) / 10.0) << i;
  EXPECT_EQ(s.factor(10), 1.0);
  EXPECT_DOUBLE_EQ(s.factor(20), 0.5);
  EXPECT_DOUBLE_EQ(s.factor(29), (1 + std::cos(std::numbers::pi * 19 / 20)) / 2);
  for (int64_t i = 1; i < 10; ++i) EXPECT_GT(s.factor(i), s.factor(i - 1)) << i;
  for (int64_t i = 11; i < 30; ++i) EXPECT_LT(s.factor(i), s.factor(i - 1)) << i;
}

TEST(LrSchedule, StepsAtMilestones) {
  const LrSchedule s(2.0, options(LrKind::steps, 0, {1, 2}, 0.5), kSteps, kEpochs);
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(s.lr(i), 2.0) << i;
  for (int64_t i = 10; i < 20; ++i) EXPECT_EQ(s.lr(i), 1.0) << i;
  for (int64_t i = 20; i < 30; ++i) EXPECT_EQ(s.lr(i), 0.5) << i;
  const LrSchedule tenth = schedule(options(LrKind::steps, 0, {2}));
  EXPECT_EQ(tenth.factor(19), 1.0);
  EXPECT_EQ(tenth.factor(20), 0.1);
  const LrSchedule late = schedule(options(LrKind::steps, 0, {5}));  // after the run: never acts
  for (int64_t i = 0; i < 30; ++i) EXPECT_EQ(late.factor(i), 1.0) << i;
}

TEST(LrSchedule, StepsWithWarmup) {
  const LrSchedule s = schedule(options(LrKind::steps, 0.5, {1}));  // W = 5
  EXPECT_DOUBLE_EQ(s.factor(0), 0.2);
  EXPECT_EQ(s.factor(4), 1.0);
  EXPECT_EQ(s.factor(9), 1.0);
  EXPECT_DOUBLE_EQ(s.factor(10), 0.1);
  // A milestone inside the warm-up lowers what the warm-up climbs to.
  const LrSchedule inside = schedule(options(LrKind::steps, 2, {1}));  // W = 20
  EXPECT_DOUBLE_EQ(inside.factor(9), 0.5);
  EXPECT_DOUBLE_EQ(inside.factor(10), 0.1 * 11 / 20);
  EXPECT_DOUBLE_EQ(inside.factor(19), 0.1);
  for (int64_t i = 20; i < 30; ++i) EXPECT_DOUBLE_EQ(inside.factor(i), 0.1) << i;
}

TEST(LrSchedule, ValidationNamesTheBadValue) {
  EXPECT_TRUE(
      throws_input_error([] { schedule(options(LrKind::cosine, -1)); }, {"warm-up -1 epochs"}));
  EXPECT_TRUE(
      throws_input_error([] { schedule(options(LrKind::cosine, std::nan(""))); }, {"warm-up nan"}));
  EXPECT_TRUE(throws_input_error([] { schedule(options(LrKind::cosine, 3.5)); },
                                 {"warm-up 3.5", "run of 3 epochs"}));
  EXPECT_TRUE(throws_input_error(
      [] {
        schedule(options(LrKind::steps, 0, {2, 1}));
      },
      {"milestones 2,1", "not strictly increasing"}));
  EXPECT_TRUE(throws_input_error(
      [] {
        schedule(options(LrKind::steps, 0, {1, 1}));
      },
      {"milestones 1,1"}));
  EXPECT_TRUE(throws_input_error(
      [] {
        schedule(options(LrKind::steps, 0, {0, 1}));
      },
      {"milestone 0"}));
  EXPECT_TRUE(throws_input_error([] { schedule(options(LrKind::cosine, 0, {1})); },
                                 {"milestones 1", "not cosine"}));
  EXPECT_TRUE(throws_input_error([] { schedule(options(LrKind::steps, 0, {1}, 0)); }, {"gamma 0"}));
  EXPECT_TRUE(throws_input_error([] { LrSchedule(1.0, LrScheduleOptions{}, 0, 3); },
                                 {"3 epochs of 0 steps"}));
  EXPECT_NO_THROW(validate(options(LrKind::steps, 3, {1, 2, 7}), 3));
}

}  // namespace
}  // namespace convgrid
