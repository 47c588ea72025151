#include "support/status.h"

#include <gtest/gtest.h>

namespace parity {
namespace {

Result<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  PARITY_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

TEST(StatusTest, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(StatusTest, CarriesKindHintAndEvidence) {
  Status s = Unavailable("training failed").WithHint("read the log").WithEvidence("exit_code", "1");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.kind(), ErrorKind::kUnavailable);
  EXPECT_NE(s.ToString().find("what to do: read the log"), std::string::npos);
  EXPECT_NE(s.ToString().find("exit_code: 1"), std::string::npos);
}

TEST(ResultTest, PropagatesTheFirstError) {
  EXPECT_EQ(Quarter(8).value(), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "odd: 3");
}

}  // namespace
}  // namespace parity
