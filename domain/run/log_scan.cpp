#include "domain/run/log_scan.h"
#include "support/utf8.h"

#include <regex>

namespace parity::run {

namespace {

constexpr size_t kMaxFindings = 50;
constexpr size_t kMaxLineKept = 600;

struct Pattern {
  const char* kind;
  std::regex re;
  const char* hint;
};

const std::vector<Pattern>& Patterns() {
  static const std::vector<Pattern> kPatterns = [] {
    auto e = [](const char* s) { return std::regex(s, std::regex::ECMAScript | std::regex::optimize); };
    return std::vector<Pattern>{
        {"dcp_metadata_missing", e(R"(AssertionError: metadata is None)"),
         "the checkpoint directory has no DCP .metadata: it was saved in HF format (load it with "
         "--checkpoint.initial_load_in_hf) or the save did not finish; regenerate the initial checkpoint"},
        {"none_string", e(R"((path|checkpoint|load|folder|dir)[^\n]{0,80}(['"]None['"]|:\s*None\s*$))"),
         "a CLI value was parsed as the string \"None\" instead of Python None: omit the option instead of "
         "passing None"},
        {"path_missing", e(R"((FileNotFoundError|No such file or directory|does not exist))"),
         "a path the training needs does not exist: check the checkpoint, dataset and tokenizer paths"},
        {"npu_oom", e(R"(NPU out of memory)"), "reduce the batch size or sequence length, or free the NPU"},
        {"cuda_oom", e(R"(CUDA out of memory|OutOfMemoryError)"), "reduce the batch size or free the GPU"},
        {"acl_error", e(R"(\bERR0[0-9]{4}\b)"), "a torch_npu/CANN call failed; see the [Error] lines around it"},
        {"cann_inner_error", e(R"(\bE[A-Z0-9]9999\b)"), "CANN inner error; the TraceBack that follows names the op"},
        {"hccl_timeout", e(R"(Watchdog caught collective operation timeout|HCCL[^\n]*[Tt]ime ?out|NCCL[^\n]*[Tt]ime ?out)"),
         "a collective timed out: a rank died or hung; read every rank's log"},
        {"device_fault", e(R"((NPU|HCCL|OPS) function error|reason=\[?(device task abort|device mem error|hbm Multi-bit ECC error|suspect device mem error|link error|hccl op retry failed|suspect remote error)|FORCE STOP)"),
         "the device reported a fault"},
        {"killed", e(R"((^|[\s:])Killed(\s|$))"), "the process was killed (often the kernel OOM killer: check dmesg)"},
        {"segfault", e(R"(Segmentation fault|core dumped)"), "the process crashed"},
        {"child_failed", e(R"(ChildFailedError)"), "a torchrun worker failed; its traceback is above"},
        {"traceback", e(R"(Traceback \(most recent call last\)|TraceBack \(most recent call last\))"),
         "a Python exception; its last line names the error"},
        {"error_line", e(R"(\bERROR\b|\[ERROR\])"), "an ERROR line in the log"},
    };
  }();
  return kPatterns;
}

std::string StripAnsi(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      size_t j = i + 2;
      while (j < s.size() && !(s[j] >= '@' && s[j] <= '~')) ++j;
      i = j;
      continue;
    }
    out += s[i];
  }
  return out;
}

bool NonFinite(const std::string& v) {
  std::string l;
  for (char c : v) l += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return l.find("nan") != std::string::npos || l.find("inf") != std::string::npos;
}

}  // namespace

void LogScanner::Feed(std::string_view chunk) {
  partial_.append(chunk);
  size_t start = 0;
  while (true) {
    size_t nl = partial_.find('\n', start);
    if (nl == std::string::npos) break;
    ScanLine(partial_.substr(start, nl - start));
    start = nl + 1;
  }
  partial_.erase(0, start);
  // A pathological line without newlines must not grow without bound.
  if (partial_.size() > (1u << 20)) partial_.erase(0, partial_.size() - (1u << 20));
}

void LogScanner::Flush() {
  if (!partial_.empty()) ScanLine(std::move(partial_));
  partial_.clear();
}

void LogScanner::ScanLine(std::string raw) {
  ++line_no_;
  if (!raw.empty() && raw.back() == '\r') raw.pop_back();
  // torchrun --tee and progress bars rewrite lines with \r; the last segment is what shows.
  size_t cr = raw.rfind('\r');
  if (cr != std::string::npos) raw = raw.substr(cr + 1);
  std::string line = StripAnsi(raw);

  static const std::regex kTitanStep(R"((^|[^a-z_])step:\s*([0-9]+)\s+loss:\s*([-+]?[0-9.,eE+-]+|nan|-?inf|NaN|-?Inf))");
  static const std::regex kTitanGrad(R"(grad_norm:\s*([-+]?[0-9.eE+-]+|nan|-?inf|NaN|-?Inf))");
  static const std::regex kMegIter(R"(iteration\s+([0-9]+)\s*/\s*([0-9]+)\s*\|)");
  static const std::regex kMegLoss(R"(\|\s*([A-Za-z0-9_ ]*loss):\s*([-+]?[0-9.eE+-]+|nan|-?inf|NaN|-?Inf)\s*\|)");
  static const std::regex kMegGrad(R"(grad norm:\s*([-+]?[0-9.eE+-]+|nan|-?inf|NaN|-?Inf))");
  std::smatch m;
  std::optional<int64_t> step;
  std::optional<std::string> loss, grad;
  if (line.find("validate step") == std::string::npos && std::regex_search(line, m, kTitanStep)) {
    step = std::stoll(m[2]);
    loss = m[3];
    if (std::regex_search(line, m, kTitanGrad)) grad = m[1];
  } else if (std::regex_search(line, m, kMegIter)) {
    step = std::stoll(m[1]);
    total_steps_ = std::stoll(m[2]);
    if (std::regex_search(line, m, kMegLoss)) loss = m[2];
    if (std::regex_search(line, m, kMegGrad)) grad = m[1];
  }
  if (step) {
    ++step_lines_;
    last_step_ = step;
    if (loss) last_loss_ = loss;
    if (grad) last_grad_norm_ = grad;
    if (loss && NonFinite(*loss)) nan_inf_.push_back({{"step", *step}, {"metric", "loss"}, {"value", *loss}, {"line", line_no_}});
    if (grad && NonFinite(*grad)) nan_inf_.push_back({{"step", *step}, {"metric", "grad_norm"}, {"value", *grad}, {"line", line_no_}});
    return;
  }
  for (const Pattern& p : Patterns()) {
    if (!std::regex_search(line, p.re)) continue;
    if (findings_.size() >= kMaxFindings) { ++findings_dropped_; return; }
    findings_.push_back({p.kind, line_no_, line.substr(0, kMaxLineKept), p.hint});
    return;  // one finding per line: the most specific pattern comes first
  }
}

json LogScanner::ToJson() const {
  json findings = json::array();
  for (const auto& f : findings_) {
    // A log line is bytes: an invalid UTF-8 byte is kept visible (\xNN), never a JSON error.
    findings.push_back({{"kind", f.kind}, {"line", f.line}, {"text", ToValidUtf8(f.text)}, {"hint", f.hint}});
  }
  return {{"last_step", last_step_ ? json(*last_step_) : json(nullptr)},
          {"step_lines", step_lines_},
          {"latest_loss", last_loss_ ? json(ToValidUtf8(*last_loss_)) : json(nullptr)},
          {"latest_grad_norm", last_grad_norm_ ? json(*last_grad_norm_) : json(nullptr)},
          {"nan_inf", nan_inf_},
          {"findings", findings},
          {"findings_dropped", findings_dropped_}};
}

}  // namespace parity::run
