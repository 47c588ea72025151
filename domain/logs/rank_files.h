// One run whose ranks wrote a log each (Slurm's `srun --output=train_%t.log`, torchrun's
// `--log-dir` with `--redirects`: <run>/attempt_0/<local_rank>/stdout.log, a trainer's own
// per-rank files), read as one result: the same shape as a log whose rank lines are
// interleaved, so compare_logs compares every rank and the worst decides.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "domain/logs/log_result.h"
#include "support/status.h"

namespace parity::logs {

// The rank a per-rank log belongs to, from its path: "rank<N>" (also rank_<N>, rank-<N>,
// any case) in the file name; else the file name's last number (train_3.log); else the
// nearest parent folder whose name is a number (torchrun: attempt_0/3/stdout.log). nullopt
// when the path names no rank.
std::optional<int> RankFromPath(const std::filesystem::path& path);

// The logs of one run's ranks, each parsed alone (ParseLog with no rank asked), merged.
// A file whose lines carry "[rankN]:" prefixes brings those ranks; any other file is the
// rank its path names (RankFromPath), and a file that names none is an error, as are two
// files that both print metrics for the same rank. Placeholders are marked across all
// files (a series constant while another rank's varies), and the result's own rank is
// `asked_rank` (an error when no file has it), else the lowest rank whose loss (or first
// metric) is not a placeholder, else the lowest rank with metrics. Its coverage and logged
// steps are that file's; errors, warnings (each naming its file) and probes are every
// file's; success is any file's marker; `sha256` is the digest of the files' sha256sum
// manifest ("<sha256>  <path>\n" in the given order) when every file was hashed; `sources`
// lists each file. `where` names the folder or pattern in messages.
Result<ParseResult> MergeRankLogs(std::vector<ParseResult> files, const std::string& where,
                                  std::optional<int> asked_rank);

}  // namespace parity::logs
