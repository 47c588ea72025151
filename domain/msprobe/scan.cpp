#include "domain/msprobe/scan.h"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "domain/msprobe/analyze_load.h"
#include "domain/msprobe/dump_tree.h"
#include "domain/msprobe/module_heat.h"

namespace parity::msprobe {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct Pair {
  std::optional<int> step;
  int rank = 0;
  uint64_t bytes = 0;  // both dump.json files
};

struct PairResult {
  Status status = Status::Ok();
  bool found = false;
  std::string api, verdict;
  uint64_t position = 0;        // baseline calls before the first divergent API
  bool position_matched = false;  // the API has a baseline counterpart (else inserted before `position`)
  std::string position_api;     // the baseline call at `position`
  uint64_t apis = 0, divergent_apis = 0;
  HeatColumn heat;
};

std::string StepName(const std::optional<int>& step) { return step ? "step" + std::to_string(*step) : "(step folder)"; }

uint64_t FileBytes(const fs::path& dir) {
  std::error_code ec;
  auto size = fs::file_size(dir / "dump.json", ec);
  return ec ? 0 : size;
}

uint64_t DefaultBudget() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 4 : uint64_t{4} << 30;
}

// The first divergence of one pair, without the source lookup; the dumps are released on return.
PairResult RunPair(const AnalyzeOptions& base_options, const Pair& pair) {
  PairResult out;
  AnalyzeOptions o = base_options;
  o.step = pair.step;
  o.rank = pair.rank;
  o.output_dir.clear();
  o.write_compare_table = false;
  analyze_internal::Loaded loaded;
  out.status = analyze_internal::LoadFromDumps(o, loaded);
  if (!out.status.ok()) return out;
  const CompareTable& walked = loaded.aligned_table ? *loaded.aligned_table : *loaded.table;
  FirstDiff diff = FindFirstDiff(loaded.input, o.criteria, 0);
  out.apis = diff.counts.entries;
  out.divergent_apis = diff.counts.divergent_entries;
  const StackIndex* stacks = loaded.stacks ? &*loaded.stacks : nullptr;
  std::string_view first_api = diff.entry ? loaded.input.entries[*diff.entry] : std::string_view();
  out.heat = LayerHeat(walked, stacks, o.locate.user_code, loaded.parents, first_api);
  if (!diff.entry) return out;
  out.found = true;
  out.api = std::string(first_api);
  out.verdict = diff.verdict;
  size_t first = walked.rows.size();
  for (size_t r : diff.input_rows) first = std::min(first, r);
  for (size_t r : diff.output_rows) first = std::min(first, r);
  out.position = loaded.baseline->entries.size();
  if (first < walked.rows.size()) {
    const uint32_t entry = walked.NpuRow(walked.rows[first]).entry;
    for (size_t u = first; u < walked.rows.size(); ++u) {
      const CompareRow& row = walked.rows[u];
      if (row.bench < 0) continue;
      out.position = loaded.baseline->rows[row.bench].entry;
      out.position_matched = walked.NpuRow(row).entry == entry;
      break;
    }
  }
  if (out.position < loaded.baseline->entries.size()) {
    out.position_api = std::string(loaded.baseline->entries[out.position].name);
  }
  return out;
}

std::string Where(const PairResult& r) {
  std::string call = "call " + std::to_string(r.position + 1) + " of the baseline's execution order";
  if (r.position_api.empty()) return "after the baseline's last call";
  return r.position_matched ? call : "inserted before " + call + " (" + r.position_api + ")";
}

std::string RankList(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i) {
    out += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
  }
  return out;
}

}  // namespace

bool IsDumpTree(const fs::path& baseline, const fs::path& candidate) {
  return ListRankFolders(baseline).size() > 1 || ListRankFolders(candidate).size() > 1;
}

Result<json> AnalyzeDumpTree(const AnalyzeOptions& options, const ScanOptions& scan) {
  if (!options.baseline_dump || !options.candidate_dump) return InvalidArgument("both dump trees are needed");
  if (options.step || options.rank) return InvalidArgument("a dump tree is scanned whole: no step or rank");
  PARITY_RETURN_IF_ERROR(analyze_internal::CheckCalibration(options));
  using Key = std::pair<int, int>;  // step (-1: a step folder), rank
  auto listing = [](const fs::path& path) {
    std::map<Key, RankFolder> out;
    for (const RankFolder& f : ListRankFolders(path)) out.emplace(Key{f.step.value_or(-1), f.rank}, f);
    return out;
  };
  auto base = listing(*options.baseline_dump), cand = listing(*options.candidate_dump);
  if (base.empty() || cand.empty()) {
    return NotFound((base.empty() ? *options.baseline_dump : *options.candidate_dump).string() +
                    ": no rank*/ folders with a dump.json (a dump tree is step*/rank*/ or rank*/)");
  }
  std::map<int, std::pair<bool, bool>> steps;  // step -> on baseline, on candidate
  for (const auto& [k, f] : base) steps[k.first].first = true;
  for (const auto& [k, f] : cand) steps[k.first].second = true;
  std::vector<int> steps_baseline_only, steps_candidate_only;
  for (const auto& [s, sides] : steps) {
    if (!sides.second) steps_baseline_only.push_back(s);
    if (!sides.first) steps_candidate_only.push_back(s);
  }
  std::string one_side;
  std::vector<Pair> pairs;
  for (const auto& [k, f] : base) {
    if (!steps[k.first].second) continue;
    auto other = cand.find(k);
    if (other == cand.end()) {
      one_side += (one_side.empty() ? "" : "; ") + StepName(f.step) + "/rank" + std::to_string(k.second) +
                  " only in the baseline";
      continue;
    }
    pairs.push_back({f.step, k.second, FileBytes(f.dir) + FileBytes(other->second.dir)});
  }
  for (const auto& [k, f] : cand) {
    if (steps[k.first].first && !base.count(k)) {
      one_side += (one_side.empty() ? "" : "; ") + StepName(f.step) + "/rank" + std::to_string(k.second) +
                  " only in the candidate";
    }
  }
  if (!one_side.empty()) {
    return InvalidArgument("ranks present on one side only: " + one_side)
        .WithHint("both sides must dump the same ranks (msprobe's rank list); compare one pair with step and rank");
  }
  if (pairs.empty()) return NotFound("no step is present on both sides");

  const size_t threads = std::max<size_t>(
      1, std::min(pairs.size(), scan.threads ? scan.threads : std::max(1u, std::thread::hardware_concurrency() / 2)));
  const uint64_t budget = scan.memory_budget ? scan.memory_budget : DefaultBudget();
  std::vector<PairResult> results(pairs.size());
  std::mutex mu;
  std::condition_variable cv;
  uint64_t in_flight = 0, peak = 0;
  size_t next = 0, done = 0;
  bool stop = false;
  auto worker = [&] {
    while (true) {
      size_t i;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] {
          return stop || next == pairs.size() || in_flight == 0 || in_flight + pairs[next].bytes <= budget;
        });
        if (stop || next == pairs.size()) return;
        i = next++;
        in_flight += pairs[i].bytes;
        peak = std::max(peak, in_flight);
      }
      if (options.cancel.cancelled()) {
        results[i].status = Cancelled();
      } else {
        try {
          results[i] = RunPair(options, pairs[i]);
        } catch (const std::exception& e) {
          results[i].status = Internal(std::string("comparing the pair: ") + e.what());
        }
      }
      std::lock_guard lock(mu);
      in_flight -= pairs[i].bytes;
      if (!results[i].status.ok()) stop = true;
      if (scan.progress) scan.progress(++done, pairs.size(), StepName(pairs[i].step) + "/rank" + std::to_string(pairs[i].rank));
      cv.notify_all();
    }
  };
  {
    std::vector<std::jthread> pool;
    for (size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
  }
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!results[i].status.ok()) {
      return std::move(results[i].status).Context(StepName(pairs[i].step) + "/rank" + std::to_string(pairs[i].rank));
    }
  }
  if (options.cancel.cancelled()) return Cancelled();

  // The earliest step with a divergence; in it, the rank whose first divergent API comes first.
  std::optional<size_t> chosen;
  std::vector<size_t> ties, later;
  auto key = [&](size_t i) { return std::make_tuple(results[i].position, results[i].position_matched ? 1 : 0); };
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!results[i].found) continue;
    if (chosen && pairs[i].step != pairs[*chosen].step) break;
    if (!chosen || key(i) < key(*chosen)) {
      if (chosen) later.insert(later.end(), ties.begin(), ties.end());
      chosen = i;
      ties = {i};
    } else if (key(i) == key(*chosen)) {
      ties.push_back(i);
    } else {
      later.push_back(i);
    }
  }
  json per_rank = json::array();
  size_t divergent = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const PairResult& r = results[i];
    divergent += r.found;
    per_rank.push_back({{"step", pairs[i].step ? json(*pairs[i].step) : json(nullptr)},
                        {"rank", pairs[i].rank},
                        {"found", r.found},
                        {"api", r.found ? json(r.api) : json(nullptr)},
                        {"verdict", r.found ? json(r.verdict) : json(nullptr)},
                        {"position", r.found ? json(r.position) : json(nullptr)},
                        {"inserted", r.found ? json(!r.position_matched) : json(nullptr)},
                        {"apis", r.apis},
                        {"divergent_apis", r.divergent_apis},
                        {"dump_bytes", pairs[i].bytes}});
  }
  const size_t pick = chosen.value_or(0);
  std::string words;
  const std::string count = std::to_string(pairs.size()) + " (step, rank) pairs, " + std::to_string(divergent) + " divergent";
  std::vector<int> tie_ranks;
  for (size_t i : ties) tie_ranks.push_back(pairs[i].rank);
  if (!chosen) {
    words = "no (step, rank) pair diverges (" + count + ")";
  } else {
    const PairResult& r = results[pick];
    words = StepName(pairs[pick].step) + ", rank " + std::to_string(pairs[pick].rank) + " diverges first (" + count +
            "): its first divergent API, " + r.api + ", is " + Where(r);
    if (ties.size() > 1) {
      words += "; ranks " + RankList(tie_ranks) + " first diverge at that same call (" + r.api +
               "), so the first rank cannot be told from the dumps: the lowest, rank " + std::to_string(pairs[pick].rank) +
               ", is named";
    }
    if (!later.empty()) {
      words += "; later at that step:";
      for (size_t n = 0; n < later.size() && n < 4; ++n) {
        const size_t i = later[n];
        words += std::string(n ? "," : "") + " rank " + std::to_string(pairs[i].rank) + " (" + results[i].api + ", " +
                 Where(results[i]) + ")";
      }
      if (later.size() > 4) words += " and " + std::to_string(later.size() - 4) + " more";
    }
  }

  auto unpaired = [&](const std::vector<int>& steps, const char* side) {
    if (steps.empty()) return;
    std::string list;
    for (int st : steps) list += (list.empty() ? "" : ", ") + StepName(st < 0 ? std::nullopt : std::optional<int>(st));
    words += "; " + list + " only in the " + side + ": not compared";
  };
  unpaired(steps_baseline_only, "baseline");
  unpaired(steps_candidate_only, "candidate");
  std::vector<HeatPair> heat;
  for (size_t i = 0; i < pairs.size(); ++i) {
    heat.push_back({pairs[i].step, pairs[i].rank, std::move(results[i].heat)});
  }
  json out = {{"pairs", pairs.size()},
              {"divergent_pairs", divergent},
              {"threads", threads},
              {"memory_budget_bytes", budget},
              {"peak_dump_bytes_in_flight", peak},
              {"first", chosen ? json{{"step", pairs[pick].step ? json(*pairs[pick].step) : json(nullptr)},
                                      {"rank", pairs[pick].rank},
                                      {"api", results[pick].api},
                                      {"position", results[pick].position},
                                      {"inserted", !results[pick].position_matched}}
                               : json(nullptr)},
              {"tied_ranks", ties.size() > 1 ? json(tie_ranks) : json::array()},
              {"explanation", words},
              {"per_rank", per_rank},
              {"steps_only_in_baseline", steps_baseline_only},
              {"steps_only_in_candidate", steps_candidate_only},
              {"heatmap", HeatmapJson(heat, chosen)}};
  AnalyzeOptions full = options;
  full.step = pairs[pick].step;
  full.rank = pairs[pick].rank;
  full.scan = std::move(out);
  return AnalyzeFirstDiff(full);
}

}  // namespace parity::msprobe
