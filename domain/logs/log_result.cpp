#include "domain/logs/log_result.h"

namespace parity::logs {

const MetricResult* ParseResult::Find(const std::string& name) const {
  for (const auto& m : metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

const MetricResult* RankMetrics::Find(const std::string& name) const {
  for (const auto& m : metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

const char* FormatName(LogFormat format) {
  switch (format) {
    case LogFormat::kAuto: return "auto";
    case LogFormat::kTorchtitan: return "torchtitan";
    case LogFormat::kTorchtitanNpu: return "torchtitan-npu";
    case LogFormat::kMegatron: return "megatron";
    case LogFormat::kDeepSpeed: return "deepspeed";
    case LogFormat::kHfTrainer: return "hf_trainer";
    case LogFormat::kJsonl: return "jsonl";
    case LogFormat::kTensorBoard: return "tensorboard";
  }
  return "auto";
}

const std::vector<std::string>& FormatNames() {
  static const std::vector<std::string> names = {"auto", "torchtitan", "torchtitan-npu", "megatron",
                                                 "mindspeed", "pangu", "deepspeed", "hf_trainer", "jsonl",
                                                 "tensorboard"};
  return names;
}

Result<LogFormat> FormatFromName(const std::string& name) {
  for (LogFormat f : {LogFormat::kAuto, LogFormat::kTorchtitan, LogFormat::kTorchtitanNpu,
                      LogFormat::kMegatron, LogFormat::kDeepSpeed, LogFormat::kHfTrainer, LogFormat::kJsonl,
                      LogFormat::kTensorBoard}) {
    if (name == FormatName(f)) return f;
  }
  if (name == "mindspeed" || name == "pangu") return LogFormat::kMegatron;
  std::string all;
  for (const auto& n : FormatNames()) all += (all.empty() ? "" : ", ") + n;
  return InvalidArgument("unknown log format \"" + name + "\"; expected one of: " + all);
}

}  // namespace parity::logs
