// inject_prints' domain: probe prints in a parity worktree. Targets are a file and line
// (the statement's inputs before it, its outputs after it), a function (its arguments at
// entry, its return values), or a line whose enclosing function is probed (how stack frames
// from msprobe_first_diff are instrumented). Python's own ast, run by the training host's
// interpreter, gives each target's structure; an analyser (analyser.h: the ast itself,
// DeepSeek or MCP sampling) decides which values to probe. Injection writes one helper module (_parity_probe.py) into
// the worktree root, one import line per touched file and one call per value; everything
// touched is recorded in <worktree>/.parity_inject/ with its original bytes, so revert
// restores each file byte for byte (checked by SHA-256) and removes the helper.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/inject/analyser.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::inject {

struct Target {
  std::string file;                     // relative to the worktree (or absolute inside it)
  std::optional<int> line;
  std::optional<std::string> function;  // "forward" or "FFN.forward"
  bool enclosing_function = false;      // with line: probe the function containing it
};

struct Options {
  std::filesystem::path worktree;
  std::vector<Target> targets;
  std::string python = "/usr/bin/python3";  // the training host's interpreter
  int rank = 0;
  std::vector<int> calls = {1};             // which calls of each probe print; empty = all
  // SHA-256 per file (relative path) from an earlier analysis: injection is refused when
  // the file changed since.
  std::map<std::string, std::string> expected_sha256;
  // Who decides each target's values, tried in order; empty = Python's ast alone.
  std::vector<std::shared_ptr<CodeAnalyser>> analysers;
  // With fall_back (analyser "auto"), a failed analyser is recorded in "attempts" and the
  // next one is tried; without, its failure is the error, with its evidence.
  bool fall_back = false;
  std::string requested = "ast";  // how the caller named its choice, echoed in the result
  // Called before each target is analysed (a model may take a while): (index, count, target).
  std::function<void(size_t, size_t, const std::string&)> progress;
  CancellationToken cancel;
};

// Refuses any folder that is not a worktree parity created (marked by audit_workspace).
Status CheckParityWorktree(const std::filesystem::path& worktree);

// What each target would probe (no file is changed). JSON: {"analyser": who decided
// ("python-ast", "deepseek", "sampling"; "a+b" when targets differ), "requested",
// "attempts": [{analyser, target, ok, kind?, message?, evidence?}], "targets": [{target,
// file, sha256, analyser, analysis}]}. An analyser waiting for the client (kInputRequired)
// still lets the other targets ask theirs, then that status is returned.
Result<nlohmann::json> Analyze(const Options& options);

// Analyses and injects. Refused when already injected (revert first), when a target is not
// found, or when a file's hash differs from expected_sha256.
Result<nlohmann::json> Inject(const Options& options);

// Restores every touched file byte for byte and removes the helper and the record.
// Refused (unless force) when a file changed after injection.
Result<nlohmann::json> Revert(const std::filesystem::path& worktree, bool force);

// What is injected now ({"injected": false} when nothing).
Result<nlohmann::json> InjectStatus(const std::filesystem::path& worktree);

std::string Sha256Hex(const std::string& bytes);

}  // namespace parity::inject
