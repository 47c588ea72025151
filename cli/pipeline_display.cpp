#include "cli/pipeline_display.h"

#include <csignal>

#include <cmath>
#include <cstdio>

namespace parity::cli {

void PipelineDisplay::Step(size_t index, size_t total, std::string_view title) {
  std::lock_guard lock(mutex_);
  step_ = index;
  total_ = total;
  title_ = std::string(title);
  detail_.clear();
  last_decile_ = -1;
  if (terminal_) Draw();
  else std::fprintf(stderr, "[%s %zu/%zu] %s\n", name_.c_str(), index, total, title_.c_str());
}

void PipelineDisplay::Note(std::string_view line) {
  std::lock_guard lock(mutex_);
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K  %.*s\n", static_cast<int>(line.size()), line.data());
    Draw();
  } else {
    std::fprintf(stderr, "  %.*s\n", static_cast<int>(line.size()), line.data());
  }
}

void PipelineDisplay::Progress(double done, std::optional<double> total, const std::string& message) {
  std::lock_guard lock(mutex_);
  detail_ = message.empty() ? (total ? std::to_string(static_cast<long>(done)) + "/" +
                                           std::to_string(static_cast<long>(*total))
                                     : std::to_string(static_cast<long>(done)))
                            : message;
  if (terminal_) {
    Draw();
    return;
  }
  int decile = total && *total > 0 ? static_cast<int>(std::floor(10 * done / *total)) : -1;
  if (decile != last_decile_) {
    last_decile_ = decile;
    std::fprintf(stderr, "    %s\n", detail_.c_str());
  }
}

void PipelineDisplay::Finish() {
  if (terminal_) std::fprintf(stderr, "\r\033[K");
}

void PipelineDisplay::Draw() {
  constexpr int kWidth = 24;
  int filled = total_ ? static_cast<int>(kWidth * (step_ - 1) / total_) : 0;
  std::string bar(filled, '#');
  bar.resize(kWidth, '.');
  std::string line = "[" + bar + "] " + std::to_string(step_) + "/" + std::to_string(total_) + " " + title_;
  if (!detail_.empty()) line += " — " + detail_;
  if (line.size() > 160) line.resize(160);
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

namespace {
CancellationSource* g_interrupted = nullptr;
extern "C" void OnInterrupt(int) {
  if (g_interrupted) g_interrupted->Cancel();  // an atomic store: safe in a signal handler
}
}  // namespace

InterruptCancels::InterruptCancels() {
  g_interrupted = &source_;
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
}

InterruptCancels::~InterruptCancels() {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  g_interrupted = nullptr;
}

nlohmann::json PipelineErrorJson(const Status& s) {
  nlohmann::json evidence = nlohmann::json::object();
  for (const auto& e : s.evidence()) evidence[e.name] = e.value;
  return {{"verdict", "ERROR"},
          {"error", {{"kind", ErrorKindName(s.kind())}, {"message", s.message()}, {"hint", s.hint()}, {"evidence", evidence}}}};
}

}  // namespace parity::cli
