#include "domain/workflow/tensorboard_run.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "support/file_read.h"
#include "support/safe_file.h"

namespace parity::workflow {

namespace fs = std::filesystem;

std::vector<std::string> TensorBoardFlags(const fs::path& dir) {
  return {"--metrics.enable_tensorboard", "--metrics.save_tb_folder=" + dir.string()};
}

bool TakesTorchtitanFlags(const std::vector<std::string>& argv) {
  for (const auto& a : argv) {
    for (const char* prefix : {"--training.", "--model.", "--job.", "--metrics.", "--parallelism."}) {
      if (a.rfind(prefix, 0) == 0) return true;
    }
  }
  return false;
}

Result<fs::path> NewestEventFile(const fs::path& dir) {
  std::error_code ec;
  fs::path newest;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().filename().string().find("tfevents") != std::string::npos &&
        it->path() > newest) {
      newest = it->path();
    }
  }
  if (newest.empty()) {
    return NotFound("the run wrote no TensorBoard event file under " + dir.string())
        .WithHint("the launcher must honour --metrics.enable_tensorboard and --metrics.save_tb_folder");
  }
  return newest;
}

Status NoTensorBoardEvents(const std::string& what, const fs::path& dir, const fs::path& log, const std::string& hint) {
  // The log's lines about TensorBoard; the trainer's reason is the first that says why
  // (not the echo of the flags parity passed).
  std::string said, reason;
  auto text = ReadFilePrefix(log, 8 << 20);
  if (text.ok()) {
    std::istringstream lines(*text);
    int kept = 0;
    for (std::string line; kept < 5 && std::getline(lines, line);) {
      std::string lower = line;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
      if (lower.find("tensorboard") == std::string::npos) continue;
      said += line + "\n";
      ++kept;
      for (const char* why : {"not installed", "no module", "not available", "unavailable", "disabled", "ignored",
                              "failed", "error", "warning"}) {
        if (reason.empty() && lower.find(why) != std::string::npos) reason = line;
      }
    }
  }
  Status s = FailedPrecondition(what + " wrote no TensorBoard event file under " + dir.string() +
                                " although it was given --metrics.enable_tensorboard and --metrics.save_tb_folder: "
                                "the trainer does not write TensorBoard" +
                                (reason.empty() ? "" : " (its log: " + reason + ")") +
                                "; stopped here, before the longer runs");
  s.WithHint("without full-precision values only the printed digits can be compared (torchtitan prints loss with 5 "
             "and grad_norm with 4 decimals), which cannot decide a bitwise or 1e-5 comparison: the verdict may be "
             "INCONCLUSIVE. " + hint);
  s.WithEvidence("log", log.string());
  if (!said.empty()) s.WithEvidence("log_lines", said);
  return s;
}

Status RefuseMetricsFileInTree(const fs::path& worktree, const std::string& relative) {
  const fs::path there = worktree / relative;
  std::error_code ec;
  if (fs::symlink_status(there, ec).type() == fs::file_type::not_found) return Status::Ok();
  return FailedPrecondition("\"metrics_file\": " + there.string() +
                            " exists before any run (the repository holds it), so parity could not tell a run's own "
                            "file from it")
      .WithHint("name a file the trainer writes and the repository does not hold (e.g. under its output folder), or "
                "remove it from the repository");
}

Status MoveMetricsFile(const fs::path& worktree, const std::string& relative, const fs::path& dest_root,
                       const fs::path& dest, const std::string& what, const fs::path& log) {
  const fs::path where = worktree / relative;
  // Per-step JSON lines are a few hundred bytes a step; far more is not a metrics file.
  constexpr uint64_t kMaxMetricsBytes = uint64_t{512} << 20;
  auto text = ReadFileUnder(worktree, relative, kMaxMetricsBytes);
  if (!text.ok() || text->empty()) {
    Status s = FailedPrecondition(what + " " +
                                  (text.ok() ? "left an empty metrics file " + where.string()
                                   : text.status().kind() == ErrorKind::kNotFound
                                       ? "wrote no metrics file " + where.string()
                                       : "left a metrics file parity cannot read: " + text.status().message()) +
                                  " (\"metrics_file\" in premerge.json)");
    s.WithHint("the trainer must write one JSON object per step (step, loss, grad_norm) to \"" + relative +
               "\" in its repository folder on every run; or remove \"metrics_file\" to compare TensorBoard events or "
               "the printed values");
    s.WithEvidence("log", log.string());
    return s;
  }
  PARITY_RETURN_IF_ERROR(WriteFileUnder(dest_root, dest.lexically_relative(dest_root), *text));
  return RemoveUnder(worktree, relative);
}

}  // namespace parity::workflow
