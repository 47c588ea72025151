// A ToolContext for calling tool handlers directly in tests: no client, so it records
// progress, never elicits or samples (Elicit returns kInputRequired), and cancels on demand.
// Its policy is the test user's (the temp dir, the build and source trees, the report
// directory, SSH to 127.0.0.1); policy tests replace it (set_policy) and script the user's
// answer to AskUser (answer_user), which is otherwise unavailable, as for a client that
// cannot elicit.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "mcp-server/tool.h"

namespace parity::testing {

// The test user's policy: the built-in rules, the temp dir, the working directory, the
// report directory, the build and source trees (the source read-only), SSH to 127.0.0.1.
inline policy::Policy TestUserPolicy(const std::filesystem::path& report_dir) {
  policy::Policy p;
  p.AddFolder(std::filesystem::temp_directory_path(), true, "test");
  // Some fixtures make their folders under /tmp whatever TMPDIR says.
  if (std::filesystem::temp_directory_path() != "/tmp") p.AddFolder("/tmp", true, "test");
  p.AddFolder(std::filesystem::current_path(), true, "test");
  if (!report_dir.empty()) p.AddFolder(std::filesystem::absolute(report_dir), true, "test");
#ifdef PARITY_TEST_SOURCE_DIR
  p.AddFolder(PARITY_TEST_SOURCE_DIR, false, "test");
#endif
#ifdef PARITY_TEST_BINARY_DIR
  p.AddFolder(PARITY_TEST_BINARY_DIR, true, "test");
#endif
  p.AddSshHost({"127.0.0.1", 0, "", "", "test"});
  return p;
}

class FakeContext : public mcp::ToolContext {
 public:
  explicit FakeContext(std::filesystem::path report_dir)
      : report_dir_(std::move(report_dir)), policy_(TestUserPolicy(report_dir_)) {}

  const policy::Policy& policy() const override { return policy_; }
  void set_policy(policy::Policy p) { policy_ = std::move(p); }
  bool CanAskUser() const override { return user_answer_.has_value(); }
  Result<mcp::ElicitAnswer> AskUser(std::string_view, std::string_view message, const mcp::json&) override {
    std::lock_guard<std::mutex> lock(mu_);
    asked_.emplace_back(message);
    if (!user_answer_) return Unavailable("no user in this test");
    return *user_answer_;
  }
  void answer_user(mcp::ElicitAnswer::Action action) { user_answer_ = mcp::ElicitAnswer{action, mcp::json::object()}; }
  std::vector<std::string> asked() const {
    std::lock_guard<std::mutex> lock(mu_);
    return asked_;
  }

  CancellationToken cancellation() const override { return source_.token(); }
  void Cancel() { source_.Cancel(); }
  void Progress(double done, std::optional<double> total, std::string_view message) override {
    std::lock_guard<std::mutex> lock(mu_);
    progress_.push_back({done, total, std::string(message)});
  }
  void Log(mcp::LogLevel, std::string_view, const mcp::json&) override {}
  bool CanElicit() const override { return false; }
  Result<mcp::ElicitAnswer> Elicit(std::string_view, std::string_view, const mcp::json&) override {
    return Status(ErrorKind::kInputRequired, "no elicitation in tests");
  }
  bool CanSample() const override { return false; }
  Result<mcp::json> Sample(std::string_view, const mcp::json&) override {
    return Unavailable("no sampling in tests");
  }
  const std::filesystem::path& report_dir() const override { return report_dir_; }

  struct Step {
    double done;
    std::optional<double> total;
    std::string message;
  };
  std::vector<Step> progress() const {
    std::lock_guard<std::mutex> lock(mu_);
    return progress_;
  }

 private:
  std::filesystem::path report_dir_;
  policy::Policy policy_;
  std::optional<mcp::ElicitAnswer> user_answer_;
  std::vector<std::string> asked_;
  CancellationSource source_;
  mutable std::mutex mu_;
  std::vector<Step> progress_;
};

}  // namespace parity::testing
