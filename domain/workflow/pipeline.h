// What the workflow pipelines (`parity premerge`, `parity hunt`) are made of: a StepRunner
// that calls one parity tool exactly as an assistant would (the command line backs it with
// the very tool handlers, in-process), and an observer that shows the steps.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "support/status.h"

namespace parity::workflow {

// Calls one parity tool; returns its structured result, or the tool's error as a Status.
class StepRunner {
 public:
  virtual ~StepRunner() = default;
  virtual Result<nlohmann::json> Call(const std::string& tool, const nlohmann::json& arguments) = 0;
};

// Where the pipeline says what it is doing (the command line draws it as a progress bar
// on a terminal, plain lines otherwise).
class PipelineObserver {
 public:
  virtual ~PipelineObserver() = default;
  virtual void Step(size_t index, size_t total, std::string_view title) = 0;
  virtual void Note(std::string_view line) = 0;
};

}  // namespace parity::workflow
