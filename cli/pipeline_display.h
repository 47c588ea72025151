// How the workflow pipelines (`parity premerge`, `parity hunt`) talk to a person or a log:
// step boundaries, notes and the running tool's progress on stderr, drawn as a progress bar
// on a terminal and as plain lines otherwise (one line per tenth of a tool's progress);
// and the error object printed on stdout when a pipeline stops.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "domain/workflow/pipeline.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::cli {

class PipelineDisplay : public workflow::PipelineObserver {
 public:
  // `name` prefixes the plain step lines: "[premerge 3/8] ...".
  PipelineDisplay(std::string name, bool terminal) : name_(std::move(name)), terminal_(terminal) {}

  void Step(size_t index, size_t total, std::string_view title) override;
  void Note(std::string_view line) override;
  void Progress(double done, std::optional<double> total, const std::string& message);
  void Finish();  // clears the bar line on a terminal

 private:
  void Draw();

  std::string name_;
  bool terminal_;
  std::mutex mutex_;
  size_t step_ = 0, total_ = 0;
  std::string title_, detail_;
  int last_decile_ = -1;
};

// While it lives, SIGINT and SIGTERM cancel token() (a pipeline then stops its trainings
// and cleans up, as after an error); the default handlers are back when it ends. One at a
// time per process.
class InterruptCancels {
 public:
  InterruptCancels();
  ~InterruptCancels();
  InterruptCancels(const InterruptCancels&) = delete;
  InterruptCancels& operator=(const InterruptCancels&) = delete;
  CancellationToken token() const { return source_.token(); }

 private:
  CancellationSource source_;
};

// {"verdict": "ERROR", "error": {kind, message, hint, evidence}}.
nlohmann::json PipelineErrorJson(const Status& status);

}  // namespace parity::cli
