// Finding the files of one rank and step in an msprobe dump tree. The path given may be the
// dump root (holding step*/), a step folder (holding rank*/), a rank folder (holding
// dump.json) or dump.json itself. Rank folders are named rank<N>, or "rank" without a number
// when the run was not distributed (msprobe's own pattern ^rank(0|[1-9][0-9]*)?$).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "support/status.h"

namespace parity::msprobe {

struct DumpFiles {
  std::filesystem::path dump_json;
  std::optional<std::filesystem::path> stack_json, construct_json, tensor_dir;
  std::optional<int> step, rank;
  size_t tensor_files = 0;  // *.pt in dump_tensor_data/
};

// step/rank: nullopt = the lowest present (rank 0 first, or the unnumbered "rank").
Result<DumpFiles> LocateDump(const std::filesystem::path& path, std::optional<int> step, std::optional<int> rank);

// Every rank folder holding a dump.json under a dump root (step*/rank*/) or a step folder
// (rank*/), ordered by step, then rank (the unnumbered "rank" is rank 0). A rank folder or
// dump.json itself: empty (one pair, LocateDump's).
struct RankFolder {
  std::optional<int> step;  // nullopt: a step folder was given
  int rank = 0;
  std::filesystem::path dir;
};
std::vector<RankFolder> ListRankFolders(const std::filesystem::path& path);

}  // namespace parity::msprobe
