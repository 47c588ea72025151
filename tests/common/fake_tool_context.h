// A ToolContext for calling tool handlers directly in tests: no client, so it records
// progress, never elicits or samples (Elicit returns kInputRequired), and cancels on demand.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "mcp-server/tool.h"

namespace parity::testing {

class FakeContext : public mcp::ToolContext {
 public:
  explicit FakeContext(std::filesystem::path report_dir) : report_dir_(std::move(report_dir)) {}

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
  CancellationSource source_;
  mutable std::mutex mu_;
  std::vector<Step> progress_;
};

}  // namespace parity::testing
