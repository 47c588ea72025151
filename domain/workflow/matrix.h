// Skill step 2: a config-matrix proposal derived from the files a change touches. Each axis
// (TP, torch.compile, activation checkpointing, optimizer, EP, CP, model converters, resume
// equivalence) is
// "touched" when a changed path matches its keywords; the proposal is the minimal matrix
// (one TP=1 config and one TP>1 config, from the registered names) plus, per other touched
// axis, the note of what to add. A proposal only: the user confirms every config.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::workflow {

struct AxisFinding {
  std::string axis;                  // "tp", "compile", "activation_checkpointing", ...
  std::string title;                 // "TP degree"
  bool touched = false;
  std::vector<std::string> files;    // the changed files that touch it
  std::string suggestion;            // what to add to the matrix when touched
};

struct MatrixProposal {
  std::vector<AxisFinding> axes;     // every axis, in the skill's order
  std::vector<std::string> configs;  // proposed registered configs (minimal matrix first)
  std::vector<std::string> notes;    // e.g. "no registered TP>1 config: add --parallelism..."
};

MatrixProposal ProposeMatrix(const std::vector<std::string>& changed_files,
                             const std::vector<std::string>& registered_configs);

nlohmann::json ToJson(const MatrixProposal& proposal);

// "tp2", "_tp_", "tp=2": whether a registered config name reads as tensor parallel > 1.
bool LooksTensorParallel(const std::string& config);

}  // namespace parity::workflow
