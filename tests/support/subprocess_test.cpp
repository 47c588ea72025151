#include "support/subprocess.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace parity {
namespace {

TEST(SubprocessTest, CapturesOutputAndExitCode) {
  ProcessOptions o;
  o.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"};
  auto r = RunProcess(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_FALSE(r->success());
  Status s = ProcessFailure("the step", o, *r);
  EXPECT_NE(s.ToString().find("the step failed: exit code 3"), std::string::npos);
  EXPECT_NE(s.ToString().find("err"), std::string::npos);
}

TEST(SubprocessTest, MissingProgramIsAnError) {
  ProcessOptions o;
  o.argv = {"parity-no-such-program-xyz"};
  auto r = RunProcess(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kUnavailable);
}

TEST(SubprocessTest, StdinEnvCwdAndArgvAreNotShellParsed) {
  ProcessOptions o;
  o.argv = {"sh", "-c", "cat; printf '%s|%s|' \"$PARITY_T\" \"$1\"; pwd", "sh", "a b;$(x)"};
  o.stdin_data = "in\n";
  o.env_set["PARITY_T"] = "v";
  o.cwd = "/tmp";
  auto r = RunProcess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "in\nv|a b;$(x)|/tmp\n");
  EXPECT_EQ(ShellQuote(o.argv).substr(0, 6), "sh -c ");
}

TEST(SubprocessTest, TimeoutKillsTheProcessGroup) {
  ProcessOptions o;
  o.argv = {"sh", "-c", "sleep 30 & sleep 30; echo never"};
  o.timeout = std::chrono::milliseconds(200);
  auto r = RunProcess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_NE(r->signal, 0);
  EXPECT_EQ(r->out.find("never"), std::string::npos);
}

TEST(SubprocessTest, CancellationStopsTheProcess) {
  CancellationSource source;
  ProcessOptions o;
  o.argv = {"sleep", "30"};
  o.cancel = source.token();
  std::thread canceller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    source.Cancel();
  });
  auto r = RunProcess(o);
  canceller.join();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->cancelled);
}

TEST(SubprocessTest, OutputCapKeepsHeadAndTail) {
  ProcessOptions o;
  o.argv = {"sh", "-c", "echo FIRST; head -c 100000 /dev/zero | tr '\\0' x; echo; echo LAST"};
  o.output_cap = 1000;
  auto r = RunProcess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->out.rfind("FIRST", 0), 0u);
  EXPECT_NE(r->out.find("LAST"), std::string::npos);
  EXPECT_NE(r->out.find("bytes of output omitted"), std::string::npos);
  EXPECT_LT(r->out.size(), 1200u);
}

TEST(SubprocessTest, StreamsAndTees) {
  std::string tee = ::testing::TempDir() + "/parity_tee.log";
  std::remove(tee.c_str());
  ProcessOptions o;
  o.argv = {"sh", "-c", "echo a; echo b >&2"};
  o.merge_stderr = true;
  o.tee_path = tee;
  std::string streamed;
  o.on_output = [&](std::string_view c) { streamed += c; };
  auto r = RunProcess(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(streamed, "a\nb\n");
  std::ifstream in(tee);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "a\nb\n");
}

TEST(SubprocessTest, LastLines) {
  EXPECT_EQ(LastLines("a\nb\nc\nd\n", 2), "c\nd");
  EXPECT_EQ(LastLines("one", 5), "one");
  EXPECT_EQ(LastLines("", 5), "");
}

}  // namespace
}  // namespace parity
