// Tests of strict JSON parsing (io/strict_json): every failure an InputError of one line naming
// the file (syntax, bad UTF-8, numbers beyond a double, repeated keys, control characters in
// strings), and nesting bounded at kMaxJsonDepth before anything recursive runs on the value.
#include "io/strict_json.hpp"

#include <gtest/gtest.h>

#include <string>

#include "throws_input_error.hpp"

namespace convgrid {
namespace {

std::string nested(int depth, char open, char close, const std::string& inner = "") {
  return std::string(depth, open) + inner + std::string(depth, close);
}

TEST(StrictJson, ParsesWhatItShould) {
  EXPECT_EQ(parse_json(R"({"b": [1, 2.5, "x"], "a": null})", "f.json"),
            nlohmann::json::parse(R"({"a": null, "b": [1, 2.5, "x"]})"));
  const nlohmann::ordered_json j = parse_ordered_json(R"({"b": 1, "a": 2})", "f.json");
  EXPECT_EQ(j.begin().key(), "b");
  EXPECT_EQ(parse_json("1.7976931348623157e308", "f.json").get<double>(), 1.7976931348623157e308);
}

TEST(StrictJson, NestingIsBoundedAtTheLimit) {
  EXPECT_NO_THROW(parse_json(nested(kMaxJsonDepth, '[', ']'), "f.json"));
  EXPECT_TRUE(throws_input_error([] { parse_json(nested(kMaxJsonDepth + 1, '[', ']'), "f.json"); },
                                 {"f.json: arrays and objects nested more than 64 deep"}));
  // Objects count as arrays do: {"a": {"a": ... }}.
  std::string objects = "1";
  for (int i = 0; i <= kMaxJsonDepth; ++i) objects = "{\"a\": " + objects + "}";
  EXPECT_TRUE(throws_input_error([&] { parse_ordered_json(objects, "f.json"); },
                                 {"f.json: arrays and objects nested more than 64 deep"}));
  // Far deeper, and unclosed: refused at depth 65, without recursion.
  EXPECT_TRUE(throws_input_error([] { parse_json(std::string(1000000, '['), "f.json"); },
                                 {"f.json: arrays and objects nested more than 64 deep"}));
}

TEST(StrictJson, NumbersBeyondADoubleAreNamedErrors) {
  for (const char* text : {"1e999", "[-1e400]", "{\"x\": 123e45678}"}) {
    EXPECT_TRUE(throws_input_error([&] { parse_json(text, "f.json"); },
                                   {"f.json: not valid JSON: number overflow parsing"}))
        << text;
    EXPECT_TRUE(throws_input_error([&] { parse_ordered_json(text, "f.json"); },
                                   {"f.json: not valid JSON: number overflow parsing"}));
  }
}

TEST(StrictJson, SyntaxErrorsRepeatedKeysAndBadUtf8) {
  EXPECT_TRUE(throws_input_error([] { parse_json("{\n  \"a\": x}", "f.json"); },
                                 {"f.json: not valid JSON: parse error at line 2, column 8"}));
  EXPECT_TRUE(throws_input_error([] { parse_json("", "f.json"); },
                                 {"f.json: not valid JSON", "line 1, column 1"}));
  EXPECT_TRUE(throws_input_error([] { parse_json(R"({"a": {"b": 1, "b": 2}})", "f.json"); },
                                 {"f.json: key 'b' appears twice in one object"}));
  EXPECT_NO_THROW(parse_json(R"({"a": {"b": 1}, "b": {"b": 2}})", "f.json"));
  EXPECT_TRUE(throws_input_error([] { parse_json("\"\xff\"", "f.json"); },
                                 {"f.json: not valid JSON", "invalid string"}));
  EXPECT_TRUE(throws_input_error([] { parse_json("[1]\n[2]", "f.json"); },
                                 {"f.json: not valid JSON", "line 2, column 1"}));
}

// Found by fuzz/network_json: errors quote names and values, and a name holding "\n" broke the
// one-line message. No string of convgrid's files needs a control character.
TEST(StrictJson, StringsWithControlCharactersAreRefused) {
  EXPECT_TRUE(
      throws_input_error([] { parse_json(R"({"name": "a\nb"})", "f.json"); },
                         {"f.json: the string \"a\\nb\" holds the control character U+000A"}));
  EXPECT_TRUE(
      throws_input_error([] { parse_ordered_json(R"({"a\tb": 1})", "f.json"); },
                         {"f.json: the string \"a\\tb\" holds the control character U+0009"}));
  EXPECT_TRUE(throws_input_error([] { parse_json(R"([1, "\u007f"])", "f.json"); }, {"U+007F"}));
  EXPECT_NO_THROW(parse_json(R"(["tab-free \"quoted\" \\ text, caf\u00e9"])", "f.json"));
}

}  // namespace
}  // namespace convgrid
