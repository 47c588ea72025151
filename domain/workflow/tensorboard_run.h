// Full-precision metrics for the workflow pipelines: torchtitan prints loss with 5 and
// grad_norm with 4 decimals, too coarse to decide bitwise equality, so the pipelines ask a
// torchtitan run for TensorBoard event files in the report directory and compare those, or
// take the JSON-lines file a trainer writes itself (premerge.json's metrics_file).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "support/status.h"

namespace parity::workflow {

// The flags that make a torchtitan run write its event files under `dir`.
std::vector<std::string> TensorBoardFlags(const std::filesystem::path& dir);

// Whether an argv takes torchtitan's dotted options (--training.steps, --model.name, ...),
// so TensorBoardFlags can be appended to it.
bool TakesTorchtitanFlags(const std::vector<std::string>& argv);

// The newest event file under dir (a run writes <dir>/<timestamp>/events.out.tfevents.*);
// an error with a hint when the run wrote none.
Result<std::filesystem::path> NewestEventFile(const std::filesystem::path& dir);

// A run that was given TensorBoardFlags(dir) and wrote no event file there: the trainer
// ignores them (torchtitan logs that TensorBoard is not installed and goes on). The error
// names `what` (the run), the folder, the lines of its log that mention TensorBoard (the
// trainer's own reason), and what is lost without full-precision values; `hint` says how
// this pipeline's user goes on (the config keys to set).
Status NoTensorBoardEvents(const std::string& what, const std::filesystem::path& dir, const std::filesystem::path& log,
                           const std::string& hint);

// metrics_file (relative to a worktree) before any run: a fresh worktree that already holds
// it has it from the repository, and a run that writes none could not be told from one that
// wrote it; refused (never removed: it is the repository's file).
Status RefuseMetricsFileInTree(const std::filesystem::path& worktree, const std::string& relative);

// After a run that ended ok: the file moved out of the worktree (parity's) to `dest` (under
// `dest_root`, written as every report file is), so the next run there starts without one.
// A run that wrote none, or an empty one, is an error naming `what` (the run), the file and
// premerge.json's key; `log` is its evidence.
Status MoveMetricsFile(const std::filesystem::path& worktree, const std::string& relative,
                       const std::filesystem::path& dest_root, const std::filesystem::path& dest, const std::string& what,
                       const std::filesystem::path& log);

}  // namespace parity::workflow
