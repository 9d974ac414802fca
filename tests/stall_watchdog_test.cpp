// The stall watchdog: the default limit's rule, a rank without progress marks ended with status
// 124 and one line naming the phase, and one with marks left alone.
#include "train/stall_watchdog.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace convgrid {
namespace {

TEST(StallWatchdog, DefaultLimitIsAMultipleOfTheMedianStepAndAtLeastAMinute) {
  EXPECT_EQ(default_step_limit({}), kStallLongPhaseSeconds);
  EXPECT_EQ(default_step_limit({0.01, 0.02, 0.5}), kStallLeastSeconds);
  // Median 4 s (one slow outlier does not move it): 20 x 4 = 80 s.
  EXPECT_DOUBLE_EQ(default_step_limit({4.0, 3.0, 100.0, 4.0, 5.0}), kStallStepMultiple * 4.0);
}

TEST(StallWatchdogDeathTest, ARankWithoutProgressEndsWithStatus124AndOneLine) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        StallWatchdog w(3, {0.2, true});
        w.enter(StallWatchdog::Phase::step, "step 7, batch 2 of epoch 1");
        std::this_thread::sleep_for(std::chrono::seconds(30));
      },
      testing::ExitedWithCode(kExitStalled),
      "convgrid: error on rank 3: stalled: no progress for 0 s \\(--stall-timeout\\) in step 7, "
      "batch 2 of epoch 1; another rank may have stopped or died: ending the job");
}

TEST(StallWatchdog, ProgressMarksKeepItQuiet) {
  StallWatchdog w(0, {0.3, true});
  for (int i = 0; i < 10; ++i) {
    w.enter(StallWatchdog::Phase::step, "step");
    w.step_took(0.1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_DOUBLE_EQ(w.limit(), 0.3);
}

TEST(StallWatchdog, DefaultLimitsByPhase) {
  StallWatchdog w(0, {});
  EXPECT_EQ(w.limit(), kStallLongPhaseSeconds);  // the start
  w.enter(StallWatchdog::Phase::step, "step 1");
  EXPECT_EQ(w.limit(), kStallLongPhaseSeconds);  // no step time known yet
  for (int i = 0; i < 5; ++i) w.step_took(10.0);
  EXPECT_EQ(w.limit(), kStallStepMultiple * 10.0);
  w.enter(StallWatchdog::Phase::checkpoint, "the checkpoint of step 5");
  EXPECT_EQ(w.limit(), kStallLongPhaseSeconds);
  const StallWatchdog off(0, {std::nullopt, false});
  EXPECT_EQ(off.limit(), std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace convgrid
