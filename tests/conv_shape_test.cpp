// Tests of ConvShape: parsing every key form, the canonical string, Ho/Wo and the counts on
// hand-computed cases, and an InputError naming the key and value for every kind of bad input.
#include "convgrid/conv_shape.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include "throws_input_error.hpp"

namespace convgrid {

// Failures print shapes in their one-line form (found by gtest through ADL, so not in the
// unnamed namespace).
void PrintTo(const ConvShape& s, std::ostream* os) { *os << s.to_string(); }

namespace {

constexpr const char* kBase = "N=1,C=1,H=5,W=5,K=1,R=3,S=3";

ConvShape with(const std::string& extra) { return ConvShape::parse(std::string(kBase) + extra); }

TEST(ConvShapeParse, RequiredKeysOnly) {
  EXPECT_EQ(ConvShape::parse("N=32,C=64,H=56,W=56,K=64,R=3,S=3"),
            (ConvShape{.N = 32, .C = 64, .H = 56, .W = 56, .K = 64, .R = 3, .S = 3}));
}

TEST(ConvShapeParse, AllOptionalKeysWithPairs) {
  // Fields left out keep their defaults: stride_w = 1, pad_left = pad_bottom = 0, dil_h = 1.
  ConvShape expected{.N = 2, .C = 3, .H = 7, .W = 8, .K = 4, .R = 3, .S = 3};
  expected.stride_h = 2;
  expected.pad_top = 1;
  expected.pad_right = 2;
  expected.dil_w = 2;
  EXPECT_EQ(
      ConvShape::parse("N=2,C=3,H=7,W=8,K=4,R=3,S=3,stride=2x1,pad=1x0,pad_end=0x2,dilation=1x2"),
      expected);
}

TEST(ConvShapeParse, SingleValuesApplyToBothDimensions) {
  const ConvShape s = with(",stride=2,pad=1,dilation=2");
  EXPECT_EQ(s.stride_w, 2);
  EXPECT_EQ(s.pad_left, 1);
  EXPECT_EQ(s.dil_w, 2);
}

TEST(ConvShapeParse, PadEndDefaultsToPad) {
  const ConvShape s = with(",pad=1x2");
  EXPECT_EQ(s.pad_bottom, 1);
  EXPECT_EQ(s.pad_right, 2);
}

TEST(ConvShapeParse, WhitespaceAndKeyOrder) {
  EXPECT_EQ(ConvShape::parse("  S=3 , R = 3,\tK=1,W=5 ,H=5,C=1,N=1 ,stride = 2 "),
            with(",stride=2"));
}

TEST(ConvShapeString, RoundTripsAndIsCanonical) {
  EXPECT_EQ(ConvShape{}.to_string(), "N=1,C=1,H=1,W=1,K=1,R=1,S=1");
  EXPECT_EQ(with(",stride=2x2,pad=1x1,pad_end=1x1").to_string(),
            std::string(kBase) + ",stride=2,pad=1");
  for (const char* extra : {"", ",stride=2x1", ",pad=1x2", ",pad_end=2x0", ",pad=0x1,pad_end=1",
                            ",dilation=2,stride=3x2,pad=2"}) {
    const ConvShape s = with(extra);
    EXPECT_EQ(ConvShape::parse(s.to_string()), s) << s.to_string();
  }
}

TEST(ConvShapeOutput, HandComputedSizes) {
  struct Case {
    const char* text;
    int64_t Ho, Wo;
  } cases[] = {
      // (H + pads - dil*(R-1) - 1) / stride + 1
      {"N=1,C=1,H=5,W=5,K=1,R=3,S=3", 3, 3},
      {"N=1,C=1,H=7,W=8,K=1,R=3,S=3,stride=2,pad=1", 4, 4},            // 6/2+1, 7/2+1
      {"N=1,C=1,H=6,W=6,K=1,R=3,S=3,pad=1x0,pad_end=0x2", 5, 6},       // (6+1-3)+1, (6+2-3)+1
      {"N=1,C=1,H=10,W=9,K=1,R=3,S=2,dilation=2x3", 6, 6},             // extents 5 and 4
      {"N=1,C=1,H=10,W=9,K=1,R=3,S=2,dilation=2x3,stride=3x1", 2, 6},  // 5/3+1
      {"N=1,C=1,H=15,W=16,K=1,R=7,S=7,stride=4,pad=3", 4, 4},          // 14/4+1, 15/4+1
      {"N=1,C=1,H=1,W=1,K=1,R=1,S=1,stride=4", 1, 1},
  };
  for (const Case& c : cases) {
    const ConvShape s = ConvShape::parse(c.text);
    EXPECT_EQ(s.Ho(), c.Ho) << c.text;
    EXPECT_EQ(s.Wo(), c.Wo) << c.text;
  }
}

TEST(ConvShapeOutput, HandComputedCounts) {
  const ConvShape s = ConvShape::parse("N=2,C=3,H=7,W=8,K=4,R=3,S=3,stride=2,pad=1");
  EXPECT_EQ(s.input_elems(), 2 * 3 * 7 * 8);
  EXPECT_EQ(s.weight_elems(), 4 * 3 * 3 * 3);
  EXPECT_EQ(s.output_elems(), 2 * 4 * 4 * 4);
  EXPECT_EQ(s.macs(), 2 * 4 * 3 * 4 * 4 * 3 * 3);
  EXPECT_EQ(s.flops(), 2.0 * 3456);
}

TEST(ConvShapeOutput, GroupedCountsUseTheChannelsOfOneGroup) {
  const ConvShape s = ConvShape::parse("N=2,C=6,H=7,W=8,K=4,R=3,S=3,stride=2,pad=1,groups=2");
  EXPECT_EQ(s.groups, 2);
  EXPECT_EQ(s.Cg(), 3);
  EXPECT_EQ(s.Kg(), 2);
  EXPECT_EQ(s.input_elems(), 2 * 6 * 7 * 8);
  EXPECT_EQ(s.weight_elems(), 4 * 3 * 3 * 3);  // K x C/G x R x S
  EXPECT_EQ(s.output_elems(), 2 * 4 * 4 * 4);
  EXPECT_EQ(s.macs(), 2 * 4 * 3 * 4 * 4 * 3 * 3);
  const ConvShape dw = ConvShape::parse("N=1,C=5,H=4,W=4,K=5,R=3,S=3,pad=1,groups=5");
  EXPECT_EQ(dw.weight_elems(), 5 * 9);
  EXPECT_EQ(dw.macs(), 5 * 16 * 9);
  EXPECT_EQ(dw.to_string(), "N=1,C=5,H=4,W=4,K=5,R=3,S=3,pad=1,groups=5");
  EXPECT_EQ(ConvShape::parse(dw.to_string()), dw);
  EXPECT_EQ(ConvShape::parse("N=1,C=5,H=4,W=4,K=5,R=3,S=3,groups=1").to_string(),
            "N=1,C=5,H=4,W=4,K=5,R=3,S=3");
}

// Each bad string with the parts its message must contain (the key and the value).
struct BadCase {
  std::string text;
  std::vector<std::string> parts;
};

void expect_rejected(const std::vector<BadCase>& cases) {
  for (const BadCase& c : cases) {
    EXPECT_TRUE(throws_input_error([&] { ConvShape::parse(c.text); }, c.parts)) << c.text;
  }
}

TEST(ConvShapeParse, RejectsBadKeys) {
  const std::string b = kBase;
  expect_rejected({
      {"N=1,C=1,H=5,W=5,K=1,R=3", {"missing key S"}},
      {"C=1,H=5,W=5,K=1,R=3,S=3", {"missing key N"}},
      {b + ",foo=3", {"unknown key 'foo'", "foo=3"}},
      {b + ",n=3", {"unknown key 'n'", "n=3"}},
      {b + ",N=2", {"'N' given twice", "N=1", "N=2"}},
      {b + ",pad=1,pad=0", {"'pad' given twice", "pad=1", "pad=0"}},
      {b + ",stride", {"'stride' is not of the form key=value"}},
  });
}

TEST(ConvShapeParse, RejectsBadValues) {
  const std::string b = kBase;
  expect_rejected({
      {"N=a,C=1,H=5,W=5,K=1,R=3,S=3", {"N=a", "not an integer"}},
      {"N=1.5,C=1,H=5,W=5,K=1,R=3,S=3", {"N=1.5", "not an integer"}},
      {"N=,C=1,H=5,W=5,K=1,R=3,S=3", {"N=", "not an integer"}},
      {"N=+1,C=1,H=5,W=5,K=1,R=3,S=3", {"N=+1", "not an integer"}},
      {"N=1 2,C=1,H=5,W=5,K=1,R=3,S=3", {"N=1 2", "not an integer"}},
      {"N=99999999999999999999,C=1,H=5,W=5,K=1,R=3,S=3", {"N=99999999999999999999"}},
      {"N=-1,C=1,H=5,W=5,K=1,R=3,S=3", {"N=-1"}},
      {"N=1,C=1,H=5,W=5,K=1,R=3,S=3,pad=-1", {"pad=-1"}},
      {"N=1099511627777,C=1,H=5,W=5,K=1,R=3,S=3", {"N=1099511627777", "2^40"}},
      {"N=0,C=1,H=5,W=5,K=1,R=3,S=3", {"N=0"}},
      {"N=1,C=1,H=5,W=5,K=0,R=3,S=3", {"K=0"}},
      {b + ",stride=0", {"stride(h)=0"}},
      {b + ",dilation=1x0", {"dilation(w)=0"}},
      {b + ",stride=2x", {"stride=2x"}},
      {b + ",stride=x2", {"stride=x2"}},
      {b + ",stride=2x1x1", {"stride=2x1x1"}},
      {b + ",pad=x", {"pad=x"}},
      {b + ",groups=0", {"groups=0"}},
      {b + ",groups=x", {"groups=x"}},
      {"N=1,C=4,H=5,W=5,K=6,R=3,S=3,groups=4", {"groups=4", "C=4", "K=6"}},
      {"N=1,C=6,H=5,W=5,K=4,R=3,S=3,groups=3", {"groups=3", "C=6", "K=4"}},
  });
}

TEST(ConvShapeParse, RejectsBadSyntax) {
  const std::string b = kBase;
  expect_rejected({
      {"", {"empty shape string"}},
      {"  \t ", {"empty shape string"}},
      {b + ",", {"empty item"}},
      {b + ", ", {"empty item"}},
      {"," + b, {"empty item"}},
      {"N=1,,C=1,H=5,W=5,K=1,R=3,S=3", {"empty item"}},
  });
}

// Found by fuzz/shape_string: errors quote the text, which then broke the one-line message.
TEST(ConvShapeParse, RejectsControlCharactersSoErrorsStayOneLine) {
  const std::string b = kBase;
  expect_rejected({
      {"N=1,\nC=1,H=5,W=5,K=1,R=3,S=3", {"control character 0x0a at offset 4", "one line"}},
      {b + ",pad=1\r", {"control character 0x0d at offset 33"}},
      {b + ",foo\x7f=1", {"control character 0x7f"}},
      {std::string("N=1\0", 4) + b, {"control character 0x00 at offset 3"}},
  });
  EXPECT_EQ(ConvShape::parse("N=1,\tC=1,H=5,W=5,K=1,R=3,S=3\t"), with(""));  // tabs are blanks
}

TEST(ConvShapeValidate, RejectsFilterLargerThanPaddedInput) {
  expect_rejected({
      {"N=1,C=1,H=2,W=5,K=1,R=3,S=3", {"R=3", "H+pads=2"}},
      {"N=1,C=1,H=5,W=4,K=1,R=3,S=7,pad=1", {"S=7", "W+pads=6"}},
      {"N=1,C=1,H=5,W=5,K=1,R=3,S=3,dilation=3", {"R=3", "dilated extent 7", "H+pads=5"}},
  });
  EXPECT_NO_THROW(ConvShape::parse("N=1,C=1,H=4,W=4,K=1,R=7,S=7,pad=2,pad_end=1"));
}

TEST(ConvShapeValidate, RejectsPaddingAsWideAsTheFilter) {
  expect_rejected({
      {"N=1,C=1,H=5,W=5,K=1,R=3,S=3,pad=3", {"padding 3x3", "extent 3x3"}},
      {"N=1,C=1,H=5,W=5,K=1,R=1,S=1,pad=1", {"padding 1x1", "extent 1x1"}},
      {"N=1,C=1,H=5,W=5,K=1,R=3,S=3,pad_end=0x3", {"end 0x3", "extent 3x3"}},
      {"N=1,C=1,H=5,W=5,K=1,R=2,S=2,dilation=2,pad=3", {"padding 3x3", "extent 3x3"}},
  });
  EXPECT_NO_THROW(ConvShape::parse("N=1,C=1,H=5,W=5,K=1,R=2,S=2,dilation=2,pad=2"));
}

TEST(ConvShapeValidate, RejectsCountsThatOverflow) {
  // 2^40 is the largest extent; products of several reach past 2^63.
  expect_rejected({
      {"N=1099511627776,C=1099511627776,H=1,W=1,K=1,R=1,S=1", {"input bytes", "overflows"}},
      {"N=1,C=1099511627776,H=1,W=1,K=1099511627776,R=1,S=1", {"weight bytes", "overflows"}},
      {"N=1,C=1,H=1,W=1099511627776,K=1099511627776,R=1,S=1099511627776",
       {"weight bytes", "overflows"}},
      {"N=1099511627776,C=1,H=1,W=1,K=1099511627776,R=1,S=1", {"output bytes", "overflows"}},
      {"N=1048576,C=4194304,H=1,W=1,K=1048576,R=1,S=1", {"flops", "overflows"}},
      {"N=1,C=1,H=1,W=1,K=1,R=1099511627776,S=1,dilation=1099511627776",
       {"filter extent", "overflows"}},
  });
  // Found by fuzz/shape_string: an overflow names the shape, like every other shape error.
  EXPECT_TRUE(throws_input_error(
      [] { ConvShape::parse("N=1048576,C=4194304,H=1,W=1,K=1048576,R=1,S=1"); },
      {"shape: flops (2*N*K*C*Ho*Wo*R*S) overflows 64 bits",
       "in N=1048576,C=4194304,H=1,W=1,K=1048576,R=1,S=1"}));
  EXPECT_NO_THROW(ConvShape::parse("N=1048576,C=1048576,H=1,W=1,K=1048576,R=1,S=1"));
}

TEST(ConvShapeValidate, ChecksFieldsSetDirectly) {
  ConvShape s;
  s.N = int64_t{1} << 41;
  EXPECT_TRUE(throws_input_error([&] { s.validate(); }, {"N=2199023255552", "2^40"}));
  s = ConvShape{};
  s.pad_top = -1;
  EXPECT_TRUE(throws_input_error([&] { s.validate(); }, {"pad(top)=-1"}));
  EXPECT_NO_THROW(ConvShape{}.validate());
}

}  // namespace
}  // namespace convgrid
