#include "domain/workflow/matrix.h"

#include <algorithm>
#include <cctype>

namespace parity::workflow {

namespace {

struct AxisRule {
  const char* axis;
  const char* title;
  std::vector<const char*> keywords;  // matched against the lower-cased path
  const char* suggestion;
};

const std::vector<AxisRule>& Rules() {
  static const std::vector<AxisRule> rules = {
      {"tp", "TP degree", {"parallel", "tensor_parallel", "/tp", "_tp", "attention", "linear", "mlp", "model.py"},
       "keep one TP=1 and one TP>1 config"},
      {"compile", "torch.compile", {"compile", "inductor", "dynamo", "custom_op"},
       "add a config with --compile.enable"},
      {"activation_checkpointing", "Activation checkpointing", {"activation_checkpoint", "checkpointing", "recompute", "/ac_"},
       "add configs with --activation_checkpoint.mode selective and full"},
      {"optimizer", "Optimizer", {"optim", "lr_scheduler", "clip_grad", "max_norm"},
       "add a config with each optimizer the change affects"},
      {"ep", "Expert parallelism", {"moe", "expert", "router", "all_to_all", "alltoall"},
       "add a config with expert parallel degree > 1"},
      {"cp", "Context parallelism", {"context_parallel", "ring_attention", "/cp", "_cp", "sequence_parallel"},
       "add a config with context parallel degree > 1"},
      {"converters", "ModelConverters", {"converter", "float8", "quantiz", "fused", "fp8"},
       "add a config with the affected model converters enabled"},
      // Megatron's gate 3: the checkpoint traps (optimizer state, RNG, data position, LR
      // schedule not restored) only show when a run is saved and resumed.
      {"resume", "Resume equivalence", {"checkpoint", "resume", "state_dict", "dcp", "safetensors", "lr_scheduler"},
       "add \"resume_at\": k to a config (gate 3: saved at step k and resumed, it must equal the uninterrupted run)"},
  };
  return rules;
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

bool LooksTensorParallel(const std::string& config) {
  std::string c = Lower(config);
  for (size_t at = c.find("tp"); at != std::string::npos; at = c.find("tp", at + 1)) {
    bool start = at == 0 || !std::isalpha(static_cast<unsigned char>(c[at - 1]));
    size_t digit = at + 2;
    while (digit < c.size() && (c[digit] == '_' || c[digit] == '=')) ++digit;
    if (start && digit < c.size() && std::isdigit(static_cast<unsigned char>(c[digit])) && c[digit] != '1') return true;
  }
  return false;
}

MatrixProposal ProposeMatrix(const std::vector<std::string>& changed_files,
                             const std::vector<std::string>& registered_configs) {
  MatrixProposal proposal;
  for (const auto& rule : Rules()) {
    AxisFinding finding{rule.axis, rule.title, false, {}, rule.suggestion};
    for (const auto& file : changed_files) {
      std::string path = "/" + Lower(file);
      bool hit = std::any_of(rule.keywords.begin(), rule.keywords.end(),
                             [&](const char* k) { return path.find(k) != std::string::npos; });
      if (hit) finding.files.push_back(file);
    }
    finding.touched = !finding.files.empty();
    proposal.axes.push_back(std::move(finding));
  }
  // The minimal matrix: the first registered TP=1 config and the first TP>1 one.
  auto tp1 = std::find_if(registered_configs.begin(), registered_configs.end(),
                          [](const std::string& c) { return !LooksTensorParallel(c); });
  auto tpn = std::find_if(registered_configs.begin(), registered_configs.end(), LooksTensorParallel);
  if (tp1 != registered_configs.end()) proposal.configs.push_back(*tp1);
  else proposal.notes.push_back("no registered TP=1 config found: name one");
  if (tpn != registered_configs.end()) {
    proposal.configs.push_back(*tpn);
  } else {
    proposal.notes.push_back("no registered TP>1 config found: add one, or run a TP=1 config with "
                             "--parallelism.tensor_parallel_degree=2 in extra_args");
  }
  for (const auto& a : proposal.axes) {
    if (a.touched && a.axis != "tp") proposal.notes.push_back(a.title + " touched (" + a.files.front() + "): " + a.suggestion);
  }
  return proposal;
}

nlohmann::json ToJson(const MatrixProposal& proposal) {
  nlohmann::json axes = nlohmann::json::array();
  for (const auto& a : proposal.axes) {
    axes.push_back({{"axis", a.axis}, {"title", a.title}, {"touched", a.touched}, {"files", a.files},
                    {"suggestion", a.suggestion}});
  }
  return {{"axes", axes}, {"configs", proposal.configs}, {"notes", proposal.notes}};
}

}  // namespace parity::workflow
