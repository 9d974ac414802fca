// Test helper: checks that a call throws convgrid::InputError with a one-line message containing
// every given part. Use as EXPECT_TRUE(throws_input_error([&] { ... }, {"key=value", ...})).
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>

#include "convgrid/error.hpp"

namespace convgrid {

// Parts: a braced list of strings, or any range of them.
template <class F, class Parts = std::initializer_list<std::string_view>>
::testing::AssertionResult throws_input_error(F&& f, const Parts& parts) {
  try {
    f();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    if (msg.find('\n') != std::string::npos) {
      return ::testing::AssertionFailure() << "message has more than one line: " << msg;
    }
    for (std::string_view part : parts) {
      if (msg.find(part) == std::string::npos) {
        return ::testing::AssertionFailure() << "message \"" << msg << "\" lacks \"" << part << '"';
      }
    }
    return ::testing::AssertionSuccess() << msg;
  }
  return ::testing::AssertionFailure() << "no InputError thrown";
}

}  // namespace convgrid
