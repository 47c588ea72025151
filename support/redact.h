// What parity writes about secrets into its records (job records, the ledger, hunt.json,
// reproduce.json, report.html): never their values. Two rules, applied where a record is
// built, so every writer shares them:
//  - environment variables of a command are recorded by name only, unless the name is one
//    whose value decides numerics and is no secret (the probe's list: ASCEND_*, HCCL_*,
//    CUDA_*, PYTHONHASHSEED, ...) or the user's policy marks it safe; a name that looks like
//    a secret (TOKEN, SECRET, PASSWORD, KEY, CREDENTIAL, AUTH, COOKIE) is recorded by name
//    only unless the policy names it explicitly;
//  - URLs lose their credentials: "https://user:tok@host/x" -> "https://user@host/x", and
//    "https://tok@host/x" (a token as the user name) -> "https://host/x".
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace parity {

// Names the user's policy marks safe to record with their values (set once at start by the
// policy loader; empty by default).
void SetRecordableEnvNames(std::set<std::string> names);

// Whether the value of `name` may be written to a record.
bool IsRecordableEnvName(std::string_view name);

// The record of a command's environment: {"env": {name: value} for recordable names,
// "unrecorded": [names whose values were left out]}.
struct RecordedEnv {
  std::map<std::string, std::string> values;
  std::set<std::string> unrecorded;
};
RecordedEnv RecordEnv(const std::map<std::string, std::string>& env);

// `url` without the credentials in its user-info part (see above); other text unchanged.
std::string RedactUrlCredentials(std::string_view url);
// Every "scheme://user:secret@" in free text (a git error message) redacted the same way.
std::string RedactCredentialsInText(std::string_view text);

}  // namespace parity
