#include "domain/msprobe/pyrepr.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "domain/msprobe/stack.h"

namespace parity::msprobe {
namespace {

TEST(PyRepr, FloatsPrintLikePython) {
  EXPECT_EQ(PyFloatRepr(1e-05), "1e-05");
  EXPECT_EQ(PyFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(PyFloatRepr(0.5), "0.5");
  EXPECT_EQ(PyFloatRepr(16.0), "16.0");
  EXPECT_EQ(PyFloatRepr(1e16), "1e+16");
  EXPECT_EQ(PyFloatRepr(123456789012345.6), "123456789012345.6");
  EXPECT_EQ(PyFloatRepr(2.9802322831784522e-09), "2.9802322831784522e-09");
  EXPECT_EQ(PyFloatRepr(-0.00019168853759765625), "-0.00019168853759765625");
  EXPECT_EQ(PyFloatRepr(3.4105026721954346), "3.4105026721954346");
  EXPECT_EQ(PyFloatRepr(-0.0), "-0.0");
  EXPECT_EQ(PyFloatRepr(NAN), "nan");
  EXPECT_EQ(PyFloatRepr(-INFINITY), "-inf");
  EXPECT_EQ(PyFloatRepr(1.5e300), "1.5e+300");
}

TEST(PyRepr, StringsQuoteLikePython) {
  EXPECT_EQ(PyStrRepr("abc"), "'abc'");
  EXPECT_EQ(PyStrRepr("it's"), "\"it's\"");
  EXPECT_EQ(PyStrRepr("a\nb"), "'a\\nb'");
  EXPECT_EQ(PyStrRepr("both ' and \""), "'both \\' and \"'");
}

TEST(PyRepr, ParsesFloatsLikePython) {
  EXPECT_EQ(*PyParseFloat(" 1.5 "), 1.5);
  EXPECT_TRUE(std::isinf(*PyParseFloat("-Infinity")));
  EXPECT_TRUE(std::isnan(*PyParseFloat("Nan")));
  EXPECT_FALSE(PyParseFloat("N/A"));
  EXPECT_FALSE(PyParseFloat("True"));
  EXPECT_FALSE(PyParseFloat("1.5%"));
}

// pandas' decimal parser as written before its first 15 digits moved to an integer: every
// digit through a double multiply and add (the reference the integer steps must equal).
std::optional<double> PandasDigitByDigit(std::string_view text) {
  static const std::vector<double> kPow10 = [] {
    std::vector<double> table(309);
    for (int k = 0; k <= 308; ++k) {
      std::string literal = "1e" + std::to_string(k);
      std::from_chars(literal.data(), literal.data() + literal.size(), table[k]);
    }
    return table;
  }();
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  double number = 0;
  int digits = 0, decimals = 0, exponent = 0;
  while (i < text.size() && digit(text[i])) {
    if (digits < 17) {
      number = number * 10. + (text[i] - '0');
      ++digits;
    } else {
      ++exponent;
    }
    ++i;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && digit(text[i]) && digits < 17) {
      number = number * 10. + (text[i++] - '0');
      ++digits;
      ++decimals;
    }
    while (i < text.size() && digit(text[i])) ++i;
    exponent -= decimals;
  }
  if (digits == 0) return std::nullopt;
  if (negative) number = -number;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) exp_negative = text[i++] == '-';
    int value = 0;
    while (i < text.size() && digit(text[i])) value = value * 10 + (text[i++] - '0');
    exponent += exp_negative ? -value : value;
  }
  if (i != text.size()) return std::nullopt;
  if (exponent > 308) return negative ? -HUGE_VAL : HUGE_VAL;
  if (exponent > 0) return number * kPow10[exponent];
  if (exponent < -308) return exponent < -616 ? 0. : number / kPow10[-308 - exponent] / kPow10[308];
  return number / kPow10[-exponent];
}

void ExpectSameBits(std::string_view text) {
  std::optional<double> got = PandasToNumeric(text), want = PandasDigitByDigit(text);
  ASSERT_EQ(got.has_value(), want.has_value()) << text;
  if (!got) return;
  EXPECT_EQ(std::memcmp(&*got, &*want, sizeof(double)), 0) << text << ": " << *got << " vs " << *want;
}

TEST(PyRepr, PandasParserEqualsItsDigitByDigitDoubleSum) {
  std::mt19937_64 random(7);
  // repr() of doubles of every magnitude, as msprobe's cells hold them.
  for (int n = 0; n < 200000; ++n) {
    uint64_t bits = random();
    double value;
    std::memcpy(&value, &bits, sizeof value);
    if (!std::isfinite(value)) continue;
    ExpectSameBits(PyFloatRepr(value));
  }
  // Digit strings of 1 to 24 digits (leading zeros count as digits in pandas), a point
  // anywhere, with and without an exponent: the 15th/16th/17th-digit boundaries.
  for (int n = 0; n < 200000; ++n) {
    std::string text = random() % 4 == 0 ? "-" : "";
    int length = 1 + static_cast<int>(random() % 24);
    int point = static_cast<int>(random() % (length + 1));
    for (int d = 0; d < length; ++d) {
      if (d == point && d > 0) text += '.';
      text += static_cast<char>('0' + (d < 3 && random() % 3 == 0 ? 0 : random() % 10));
    }
    if (random() % 3 == 0) text += "e" + std::to_string(static_cast<int>(random() % 80) - 40);
    ExpectSameBits(text);
  }
  ExpectSameBits("999999999999999");
  ExpectSameBits("9999999999999999");
  ExpectSameBits("99999999999999999");
  ExpectSameBits("9007199254740993");
  ExpectSameBits("0.00000000000000012345678901234567");
}

TEST(Frames, ParsesMsprobeFrameStrings) {
  auto f = ParseFrame("File /home/ma-user/work/toy-block/train.py, line 64, in forward, \n return self.fc2(x)");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->file, "/home/ma-user/work/toy-block/train.py");
  EXPECT_EQ(f->line, 64);
  EXPECT_EQ(f->function, "forward");
  EXPECT_EQ(f->code, "return self.fc2(x)");
  EXPECT_TRUE(IsUserFrame(*f));
  EXPECT_FALSE(ParseFrame("not a frame"));
}

TEST(Frames, FrameworkAndRuntimeAreNotUserCode) {
  for (const char* path : {"/usr/lib/python3/dist-packages/torch/nn/modules/linear.py",
                           "/usr/local/lib/python3.11/site-packages/msprobe/pytorch/hook_module/wrap_functional.py",
                           "/opt/venv/lib/python3.9/site-packages/torch_npu/utils.py", "/usr/lib/python3.11/runpy.py",
                           "<frozen runpy>"}) {
    Frame f;
    f.file = path;
    EXPECT_FALSE(IsUserFrame(f)) << path;
  }
  Frame user;
  user.file = "/home/u/MindSpeed-LLM/mindspeed_llm/core/transformer.py";
  EXPECT_TRUE(IsUserFrame(user));
}

TEST(StackJson, ReadsTheOldForm) {
  auto index = ParseStackJson(R"J({
    "Tensor.__add__.0.forward": [
        "File /path_to_package/mstt/debug/accuracy_tools/msprobe/pytorch/hook_module/wrap_tensor.py, line 61, in tensor_op_template, \n return TensorOPTemplate(op_name, hook)(*args, **kwargs)",
        "File /path_to_net/PanGu/pangu/training/utils.py, line 176, in get_ltor_reset_masks_and_position_ids, \n attention_mask[b, 0, (i + 1):, :(i + 1)] = 0"
    ]})J", "old.json");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_FALSE(index->new_form());
  const auto* frames = index->Find("Tensor.__add__.0.forward");
  ASSERT_NE(frames, nullptr);
  ASSERT_EQ(frames->size(), 2u);
  EXPECT_EQ(ParseFrame((*frames)[1])->line, 176);
}

TEST(StackJson, ReadsTheNewDeduplicatedForm) {
  auto index = ParseStackJson(R"J({
    "0": [["Functional.linear.0.forward", "Functional.linear.5.forward"],
          ["File /a/train.py, line 90, in forward, \n return x"]],
    "1": [["Functional.layer_norm.0.forward"], ["File /a/train.py, line 76, in forward, \n x = 1"]]})J",
                              "new.json");
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_TRUE(index->new_form());
  ASSERT_NE(index->Find("Functional.linear.5.forward"), nullptr);
  EXPECT_EQ(ParseFrame(index->Find("Functional.layer_norm.0.forward")->front())->line, 76);
  EXPECT_EQ(index->Find("Functional.relu.0.forward"), nullptr);
}

TEST(StackJson, RejectsWhatIsNotAStackFile) {
  auto bad = ParseStackJson("[1,2]", "x/stack.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x/stack.json"), std::string::npos);
  auto bad_frames = ParseStackJson(R"J({"A.b.0.forward": [1]})J", "y.json");
  ASSERT_FALSE(bad_frames.ok());
  EXPECT_NE(bad_frames.status().message().find("A.b.0.forward"), std::string::npos);
}

}  // namespace
}  // namespace parity::msprobe
