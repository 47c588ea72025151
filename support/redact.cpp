#include "support/redact.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <mutex>

namespace parity {

namespace {

std::mutex& NamesMutex() {
  static std::mutex m;
  return m;
}
std::set<std::string>& UserNames() {
  static std::set<std::string> names;
  return names;
}

// The probe's numerics variables (domain/env/probe_script.h): values that decide a run.
constexpr std::array<std::string_view, 9> kPrefixes = {"ASCEND_", "HCCL_",    "NCCL_", "CUBLAS_", "CUDA_",
                                                       "CUDNN_",  "PYTORCH_", "TORCH_", "NPU_"};
constexpr std::array<std::string_view, 11> kNames = {
    "PYTHONHASHSEED",     "OMP_NUM_THREADS",      "MKL_NUM_THREADS",  "CLOSE_MATMUL_K_SHIFT",
    "TASK_QUEUE_ENABLE",  "CPU_AFFINITY_CONF",    "STREAMS_PER_DEVICE", "MULTI_STREAM_MEMORY_RESERVE",
    "LD_LIBRARY_PATH",    "PYTHONPATH",           "PATH"};
constexpr std::array<std::string_view, 8> kSecretWords = {"TOKEN", "SECRET", "PASSWORD", "PASSWD",
                                                          "KEY",   "CREDENTIAL", "AUTH", "COOKIE"};

bool LooksSecret(std::string_view name) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (std::string_view w : kSecretWords) {
    if (upper.find(w) != std::string::npos) return true;
  }
  return false;
}

bool IsSchemeChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.';
}

// The user-info of the URL whose "://" is at `sep` in `text`, redacted; `end` is set past it.
std::string RedactAuthority(std::string_view text, size_t scheme_start, size_t sep, size_t* end) {
  std::string_view scheme = text.substr(scheme_start, sep - scheme_start);
  size_t host_start = sep + 3;
  size_t stop = text.find_first_of("/?# \t\r\n\"'<>", host_start);
  if (stop == std::string_view::npos) stop = text.size();
  std::string_view authority = text.substr(host_start, stop - host_start);
  size_t at = authority.rfind('@');
  *end = stop;
  std::string out(text.substr(scheme_start, host_start - scheme_start));
  if (at == std::string_view::npos) return out + std::string(authority);
  std::string_view info = authority.substr(0, at), host = authority.substr(at + 1);
  size_t colon = info.find(':');
  std::string lower(scheme);
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  bool web = lower == "http" || lower == "https";
  if (colon != std::string_view::npos) return out + std::string(info.substr(0, colon)) + "@" + std::string(host);
  if (web) return out + std::string(host);  // a lone user-info over http(s) is a token as often as a name
  return out + std::string(authority);      // ssh://git@host: a user name, no secret
}

}  // namespace

void SetRecordableEnvNames(std::set<std::string> names) {
  std::lock_guard<std::mutex> lock(NamesMutex());
  UserNames() = std::move(names);
}

bool IsRecordableEnvName(std::string_view name) {
  {
    std::lock_guard<std::mutex> lock(NamesMutex());
    if (UserNames().count(std::string(name))) return true;
  }
  if (LooksSecret(name)) return false;
  for (std::string_view p : kPrefixes) {
    if (name.substr(0, p.size()) == p) return true;
  }
  return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

RecordedEnv RecordEnv(const std::map<std::string, std::string>& env) {
  RecordedEnv out;
  for (const auto& [k, v] : env) {
    if (IsRecordableEnvName(k)) out.values[k] = v;
    else out.unrecorded.insert(k);
  }
  return out;
}

std::string RedactCredentialsInText(std::string_view text) {
  std::string out;
  size_t copied = 0;
  for (size_t sep = text.find("://"); sep != std::string_view::npos; sep = text.find("://", copied)) {
    size_t start = sep;
    while (start > copied && IsSchemeChar(text[start - 1])) --start;
    if (start == sep) {  // "://" with no scheme before it
      out.append(text.substr(copied, sep + 3 - copied));
      copied = sep + 3;
      continue;
    }
    out.append(text.substr(copied, start - copied));
    size_t end = 0;
    out += RedactAuthority(text, start, sep, &end);
    copied = end;
  }
  out.append(text.substr(copied));
  return out;
}

std::string RedactUrlCredentials(std::string_view url) { return RedactCredentialsInText(url); }

}  // namespace parity
