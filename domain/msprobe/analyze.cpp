#include "domain/msprobe/analyze.h"

#include <fstream>
#include <thread>
#include <unordered_map>

#include "domain/msprobe/align.h"
#include "domain/msprobe/analyze_load.h"
#include "domain/msprobe/module_heat.h"
#include "domain/msprobe/compare_csv.h"
#include "domain/msprobe/dump_tree.h"
#include "domain/msprobe/stack.h"
#include "domain/msprobe/value_trace.h"
#include "support/safe_file.h"

namespace parity::msprobe {

using analyze_internal::Loaded;
namespace fs = std::filesystem;
using json = nlohmann::json;

std::optional<std::vector<std::string>> ParsePyStrList(std::string_view text) {
  std::vector<std::string> items;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) ++i;
  };
  skip_space();
  if (i >= text.size() || text[i] != '[') return std::nullopt;
  ++i;
  while (true) {
    skip_space();
    if (i >= text.size()) return std::nullopt;
    if (text[i] == ']') return items;
    char quote = text[i];
    if (quote != '\'' && quote != '"') return std::nullopt;
    ++i;
    std::string item;
    while (i < text.size() && text[i] != quote) {
      if (text[i] == '\\' && i + 1 < text.size()) {
        char e = text[++i];
        switch (e) {
          case 'n': item += '\n'; break;
          case 't': item += '\t'; break;
          case 'r': item += '\r'; break;
          case '\\': item += '\\'; break;
          case '\'': item += '\''; break;
          case '"': item += '"'; break;
          default: item += '\\'; item += e;
        }
        ++i;
      } else {
        item += text[i++];
      }
    }
    if (i >= text.size()) return std::nullopt;
    ++i;  // closing quote
    items.push_back(std::move(item));
    skip_space();
    if (i < text.size() && text[i] == ',') ++i;
  }
}

namespace {

json FrameJson(const Frame& f, const std::vector<std::string>& user_code) {
  return {{"file", f.file}, {"line", f.line}, {"function", f.function}, {"code", f.code},
          {"user", IsUserFrame(f, user_code)}};
}


std::string NoiseExplanation(const FirstDiff& diff, const NoiseFinding& n, const DiffInput& input) {
  switch (n.kind) {
    case NoiseKind::kCrcAfterInplace: {
      std::string later = n.later_row ? input.row_text(*n.later_row).name : std::string("a later in-place op's output");
      return std::string("the ") + (n.candidate_side ? "candidate" : "baseline") + "'s CRC of this row is the CRC " +
             later + " has on that side, a value the tensor reached only after that in-place op changed it, and " +
             later + " is equal on both sides: msprobe hashed this tensor in its background thread after the "
             "in-place op (the statistics, computed in the hook, " +
             (input.rows[n.row].stats_compared ? std::string(input.rows[n.row].stats_equal ? "are equal" : "differ")
                                               : std::string("were not recorded")) +
             "); noise, not a divergence";
    }
    case NoiseKind::kCrcUnconfirmed:
      return "the CRC differs but the statistics msprobe computed in the hook are equal, and no later row shows either "
             "side's value again still differing: nothing in the dump shows the difference propagated; not counted";
    case NoiseKind::kMaskedInput:
      (void)diff;
      return "a tensor input differs while every output of the op is equal: the op masks the difference, nothing "
             "after it sees it";
  }
  return "";
}

// The values that differ at the first divergent API, for the search of the changed hunks:
// non-tensor arguments' two values, and differing dtypes of tensor inputs.
std::vector<std::pair<std::string, std::string>> DifferingValues(const DiffInput& input, const FirstDiff& diff) {
  std::vector<std::pair<std::string, std::string>> values;
  for (size_t r : diff.evidence.differing_arguments) {
    RowText t = input.row_text(r);
    if (t.candidate && t.baseline) values.push_back({*t.candidate, *t.baseline});
  }
  for (size_t r : diff.evidence.differing_inputs) {
    json d = input.describe(r);
    if (d.contains("dtype") && d["dtype"].is_object() && d["dtype"]["candidate"].is_string() &&
        d["dtype"]["baseline"].is_string() && d["dtype"]["candidate"] != d["dtype"]["baseline"]) {
      values.push_back({d["dtype"]["candidate"].get<std::string>(), d["dtype"]["baseline"].get<std::string>()});
    }
  }
  return values;
}

// Where the value that differs at a line outside every changed hunk was set.
json TraceFromLine(const AnalyzeOptions& options, const json& source,
                   const std::vector<std::pair<std::string, std::string>>& values) {
  ValueTraceRequest req;
  req.worktree = options.locate.worktree;
  req.baseline_ref = options.locate.baseline_ref;
  req.candidate_ref = options.locate.candidate_ref.empty() ? "HEAD" : options.locate.candidate_ref;
  req.file = source["local_file"].get<std::string>();
  req.line = source.value("line", 0);
  req.values = values;
  // The worktree first: a linked worktree's HEAD is its own checkout.
  Result<ValueTrace> trace = InvalidArgument("no worktree");
  for (const fs::path& repo : {options.locate.worktree, options.locate.repo}) {
    if (repo.empty()) continue;
    req.repo = repo;
    trace = TraceValue(req);
    if (trace.ok()) break;
  }
  if (!trace.ok()) return {{"sentence", "the changed hunks could not be read: " + trace.status().message()}};
  return ToJson(*trace);
}

json Names(const Dump& dump, uint32_t begin, uint32_t end, size_t limit = 5) {
  json out = json::array();
  for (uint32_t e = begin; e < end && out.size() < limit; ++e) out.push_back(std::string(dump.entries[e].name));
  return out;
}

json EditJson(const AlignedEdit& e, const Dump& candidate, const Dump& baseline) {
  return {{"kind", AlignedEditName(e.kind)},
          {"candidate", Names(candidate, e.npu_begin, e.npu_end)},
          {"baseline", Names(baseline, e.bench_begin, e.bench_end)},
          {"candidate_count", e.npu_end - e.npu_begin},
          {"baseline_count", e.bench_end - e.bench_begin}};
}

std::string Joined(const json& names) {
  std::string out;
  for (const json& n : names) out += (out.empty() ? "" : ", ") + n.get<std::string>();
  return out;
}

std::string AlignedWords(const json& e) {
  const std::string kind = e["kind"];
  if (kind == "substituted") {
    return "the candidate calls " + Joined(e["candidate"]) + " where the baseline calls " + Joined(e["baseline"]) +
           " (a substituted call)";
  }
  if (kind == "inserted") return "the candidate calls " + Joined(e["candidate"]) + ", which the baseline does not (inserted)";
  return "the baseline calls " + Joined(e["baseline"]) + " just before, which the candidate does not (removed)";
}

// The edit that holds the candidate entry `api`, or a removal right before it.
std::optional<AlignedEdit> EditAt(const Alignment& a, const Dump& candidate, const std::string& api) {
  std::optional<uint32_t> index;
  for (uint32_t e = 0; e < candidate.entries.size(); ++e) {
    if (candidate.entries[e].name == api) {
      index = e;
      break;
    }
  }
  if (!index) return std::nullopt;
  for (const AlignedEdit& e : a.edits) {
    if (e.kind != AlignedEdit::Kind::kDelete && *index >= e.npu_begin && *index < e.npu_end) return e;
    if (e.kind == AlignedEdit::Kind::kDelete && e.npu_begin == *index) return e;
  }
  return std::nullopt;
}

json AlignmentJson(const Alignment& a, const Dump& candidate, const Dump& baseline, bool used) {
  json edits = json::array();
  for (size_t i = 0; i < a.edits.size() && i < 20; ++i) edits.push_back(EditJson(a.edits[i], candidate, baseline));
  json examples = json::array();
  for (auto [c, b] : a.mispaired) {
    int64_t aligned = a.bench_of_npu[c];
    examples.push_back({{"candidate", std::string(candidate.entries[c].name)},
                        {"msprobe_pairs_with", std::string(baseline.entries[b].name)},
                        {"aligned_with", aligned >= 0 ? json(std::string(baseline.entries[aligned].name)) : json(nullptr)}});
  }
  return {{"complete", a.complete},
          {"edit_count", a.edits.size()},
          {"edits", edits},
          {"mispaired_by_msprobe", a.mispaired_total},
          {"mispaired_examples", examples},
          {"used_for_first_diff", used},
          {"note", !a.complete ? "more edits than parity aligns (4096): msprobe's pairing by name is used"
                   : used      ? "msprobe's pairing by name and call counter compares different ops here; the first "
                                 "divergence is searched on the aligned pairs (the compare table keeps msprobe's pairing)"
                               : "both pairings agree"}};
}

json DescribeRows(const DiffInput& input, const std::vector<size_t>& rows) {
  json out = json::array();
  for (size_t r : rows) out.push_back(input.describe(r));
  return out;
}

// compare_table.csv on a thread of its own, while the answer is worked out. Joined by Finish,
// or by the destructor on an early return (declared after the tables it reads, so it is
// destroyed, and joined, first).
class TableWriter {
 public:
  void Start(const CompareTable& table, const StackIndex* stacks, fs::path path) {
    path_ = std::move(path);
    thread_ = std::jthread([this, &table, stacks] {
      try {
        status_ = WriteCompareCsv(table, stacks, path_);
      } catch (const std::exception& e) {
        status_ = Internal(std::string("writing ") + path_.string() + ": " + e.what());
      }
    });
  }
  Status Finish() {
    if (thread_.joinable()) thread_.join();
    return status_;
  }

 private:
  fs::path path_;
  Status status_ = Status::Ok();
  std::jthread thread_;
};

}  // namespace

Result<json> AnalyzeFirstDiff(const AnalyzeOptions& options) {
  Loaded loaded;
  TableWriter table_writer;
  if (options.write_compare_table && options.output_dir.empty()) {
    return InvalidArgument("writing the compare table needs an output folder");
  }
  PARITY_RETURN_IF_ERROR(analyze_internal::CheckCalibration(options));
  if (options.compare_result) {
    if (options.baseline_dump || options.candidate_dump) {
      return InvalidArgument("give either the two dumps or a compare result, not both");
    }
    if (options.write_compare_table) {
      return InvalidArgument("a compare result is read, not compared: there is no table of parity's to write");
    }
    if (options.msprobe_run) return InvalidArgument("msprobe compare runs on the two dumps, not on a compare result");
    PARITY_RETURN_IF_ERROR(analyze_internal::LoadFromTable(*options.compare_result, loaded, options));
  } else if (options.msprobe_run) {
    if (!options.baseline_dump || !options.candidate_dump) {
      return InvalidArgument("running msprobe compare needs baseline_dump and candidate_dump");
    }
    PARITY_RETURN_IF_ERROR(analyze_internal::LoadFromMsprobeRun(options, loaded));
  } else {
    if (!options.baseline_dump || !options.candidate_dump) {
      return InvalidArgument("both baseline_dump and candidate_dump are needed (or a compare_result)");
    }
    PARITY_RETURN_IF_ERROR(analyze_internal::LoadFromDumps(options, loaded));
    if (options.write_compare_table) {
      fs::path csv = options.output_dir / "compare_table.csv";
      table_writer.Start(*loaded.table, loaded.stacks ? &*loaded.stacks : nullptr, csv);
      loaded.table_file = csv.string();
    }
  }
  if (options.cancel.cancelled()) return Cancelled();

  FirstDiff diff = FindFirstDiff(loaded.input, options.criteria, options.max_next);
  json out;
  out["schema"] = "parity.hunt/1";
  out["source"] = loaded.source;
  out["mode"] = DumpModeName(loaded.mode);
  out["criteria"] = {{"mode", CriteriaModeName(options.criteria.mode)},
                     {"abs", options.criteria.abs_tol},
                     {"rel", options.criteria.rel_tol},
                     {"ignore", options.criteria.ignore}};
  if (loaded.noise) out["criteria"]["noise"] = NoiseEnvelopeJson(*loaded.noise);
  out["matching"] = {{"fuzzy", options.compare.fuzzy}, {"require_same_shape", options.compare.require_same_shape}};
  out["alignment"] = loaded.alignment ? AlignmentJson(*loaded.alignment, *loaded.candidate, *loaded.baseline,
                                                      loaded.aligned_table.has_value())
                                      : json(nullptr);
  if (loaded.mode == DumpMode::kAll) {
    out["real_data_metrics"] =
        "not computed: tensor mode is analysed with the statistics recorded in dump.json (as msprobe -da does); "
        "Cosine/EucDist/MaxAbsErr columns are N/A";
  }
  out["found"] = diff.entry.has_value();
  out["explanation"] = diff.explanation;

  auto stack_of = [&](const std::string& entry) -> const std::vector<std::string>* {
    if (loaded.stacks) return loaded.stacks->Find(entry);
    auto it = loaded.csv_stacks.find(entry);
    return it == loaded.csv_stacks.end() ? nullptr : &it->second;
  };

  if (diff.entry) {
    const std::string api(loaded.input.entries[*diff.entry]);
    json first;
    first["api"] = api;
    first["verdict"] = diff.verdict;
    first["explanation"] = diff.explanation;
    auto texts = [&](const std::vector<size_t>& rows) {
      std::vector<RowText> out;
      for (size_t r : rows) out.push_back(loaded.input.row_text(r));
      return out;
    };
    std::vector<std::string> passes;
    for (size_t r : diff.evidence.msprobe_passes) passes.push_back(loaded.input.row_text(r).name);
    const std::string earlier =
        diff.evidence.earlier_difference ? std::string(loaded.input.entries[*diff.evidence.earlier_difference]) : "";
    first["cause"] = {{"kind", CauseName(diff.decision->cause)},
                      {"rule", diff.decision->rule},
                      {"sentence", diff.decision->sentence},
                      {"evidence", EvidenceJson(diff.evidence, texts(diff.evidence.differing_inputs), texts(diff.evidence.differing_arguments),
                                                texts(diff.evidence.differing_outputs), passes, earlier)},
                      {"trace", nullptr}};
    if (!passes.empty()) {
      first["msprobe_note"] = "msprobe's own rules pass " + std::to_string(passes.size()) + " of the divergent rows (" +
                              passes.front() + (passes.size() > 1 ? ", ..." : "") + "): parity counts every "
                              "difference the dump shows";
    } else {
      first["msprobe_note"] = nullptr;
    }
    first["inputs_equal"] = diff.evidence.differing_inputs.empty();
    first["arguments_equal"] = diff.evidence.differing_arguments.empty();
    first["divergent_rows"] = DescribeRows(loaded.input, diff.divergent_rows);
    first["differing_inputs"] = DescribeRows(loaded.input, diff.evidence.differing_inputs);
    first["differing_arguments"] = DescribeRows(loaded.input, diff.evidence.differing_arguments);
    first["inputs"] = DescribeRows(loaded.input, diff.input_rows);
    first["outputs"] = DescribeRows(loaded.input, diff.output_rows);
    json modules = json::array();
    std::string current = api;
    for (int depth = 0; depth < 64; ++depth) {
      auto it = loaded.parents.find(current);
      if (it == loaded.parents.end() || it->second.empty()) break;
      modules.push_back(it->second);
      current = it->second;
    }
    first["modules"] = modules;
    json frames = json::array();
    std::optional<Frame> user;
    if (const auto* stack = stack_of(api)) {
      for (const std::string& raw : *stack) {
        auto frame = ParseFrame(raw);
        if (!frame) {
          frames.push_back({{"raw", raw}, {"user", false}});
          continue;
        }
        frames.push_back(FrameJson(*frame, options.locate.user_code));
        if (!user && IsUserFrame(*frame, options.locate.user_code)) user = *frame;
      }
      if (user) {
        first["stack_note"] = nullptr;
      } else if (!options.locate.user_code.empty()) {
        std::string markers;
        for (const auto& m : options.locate.user_code) markers += (markers.empty() ? "\"" : ", \"") + m + "\"";
        first["stack_note"] = "no frame of " + api + "'s stack has a path holding " + markers +
                              " (user_code): check the fragment against the paths in the stack";
      } else {
        first["stack_note"] = "every frame of " + api + "'s stack is in a framework or the Python runtime";
      }
    } else {
      first["stack_note"] = "no stack recorded for " + api + " (no stack.json, or msprobe did not record one)";
    }
    first["stack"] = frames;
    first["user_frame"] = user ? FrameJson(*user, options.locate.user_code) : json(nullptr);
    first["source"] = user ? ToJson(LocateSource(*user, options.locate)) : json(nullptr);
    if (loaded.alignment && loaded.alignment->complete) {
      if (auto edit = EditAt(*loaded.alignment, *loaded.candidate, api)) {
        json e = EditJson(*edit, *loaded.candidate, *loaded.baseline);
        first["alignment"] = e;
        std::string words = "; aligned by what each call is, " + AlignedWords(e);
        first["cause"]["sentence"] = first["cause"]["sentence"].get<std::string>() + words;
        first["explanation"] = first["cause"]["sentence"];
        out["explanation"] = first["cause"]["sentence"];
      }
    }
    const json& src = first["source"];
    if (src.is_object() && src.value("git_checked", false) && !src.value("in_changed_hunk", true) &&
        src["local_file"].is_string() && !options.locate.worktree.empty()) {
      first["cause"]["trace"] = TraceFromLine(options, src, DifferingValues(loaded.input, diff));
    }
    out["first_divergence"] = first;
  } else {
    out["first_divergence"] = nullptr;
  }
  json next = json::array();
  for (uint32_t e : diff.next_entries) next.push_back(std::string(loaded.input.entries[e]));
  out["next_divergences"] = next;
  json noise = json::array();
  for (const auto& n : diff.noise) {
    json item = {{"api", std::string(loaded.input.entries[n.entry])}, {"kind", NoiseKindName(n.kind)},
                 {"row", loaded.input.describe(n.row)}};
    if (n.later_row) {
      item["later_row"] = loaded.input.row_text(*n.later_row).name;
      item["hashed_late_on"] = n.candidate_side ? "candidate" : "baseline";
    }
    item["explanation"] = NoiseExplanation(diff, n, loaded.input);
    noise.push_back(item);
  }
  out["noise"] = noise;
  out["noise_total"] = diff.noise_total;
  out["msprobe_first_flagged"] =
      diff.msprobe_first_flagged ? json(std::string(loaded.input.entries[*diff.msprobe_first_flagged])) : json(nullptr);
  out["first_any_difference"] =
      diff.first_any_difference ? json(std::string(loaded.input.entries[*diff.first_any_difference])) : json(nullptr);
  const auto& c = diff.counts;
  uint64_t bench_unmatched = loaded.table ? loaded.table->bench_rows_unmatched : 0;
  out["counts"] = {{"rows", c.rows},
                   {"matched", c.matched},
                   {"unmatched_candidate", c.unmatched_npu},
                   {"unmatched_baseline", loaded.table ? json(bench_unmatched) : json(nullptr)},
                   {"identical_rows", c.identical_rows},
                   {"divergent_rows", c.divergent_rows},
                   {"apis", c.entries},
                   {"divergent_apis", c.divergent_entries},
                   {"ignored_apis", c.ignored_entries}};
  out["compare_table"] = loaded.table_file ? json(*loaded.table_file) : json(nullptr);
  if (options.scan.is_object()) {
    out["scan"] = options.scan;
    out["explanation"] = options.scan.value("explanation", "") + ": " + out["explanation"].get<std::string>();
  }
  if (options.scan.is_object() && options.scan.contains("heatmap")) {  // every pair's column
    out["heatmap"] = options.scan["heatmap"];
    out["scan"].erase("heatmap");
  } else if (loaded.table) {  // this pair's column
    const CompareTable& walked = loaded.aligned_table ? *loaded.aligned_table : *loaded.table;
    const StackIndex* stacks = loaded.stacks ? &*loaded.stacks : nullptr;
    auto number = [&](const char* key) -> std::optional<int> {
      const json& v = loaded.source["candidate"][key];
      return v.is_number_integer() ? std::optional<int>(v.get<int>()) : std::nullopt;
    };
    std::string_view first = diff.entry ? loaded.input.entries[*diff.entry] : std::string_view();
    HeatPair pair{number("step"), number("rank"), LayerHeat(walked, stacks, options.locate.user_code, loaded.parents, first)};
    out["heatmap"] = HeatmapJson({pair}, diff.entry ? std::optional<size_t>(0) : std::nullopt);
  }

  if (options.on_answer) options.on_answer(out);
  if (Status s = table_writer.Finish(); !s.ok()) {
    std::string answer = diff.entry ? "the first divergent API, " + std::string(loaded.input.entries[*diff.entry]) + ", is known"
                                    : "no API diverges";
    return std::move(s).Context(answer + ", but the compare table was not written");
  }
  if (!options.output_dir.empty()) {
    std::error_code ec;
    fs::create_directories(options.output_dir, ec);
    PARITY_RETURN_IF_ERROR(WriteFileAtomic(options.output_dir / "hunt.json", out.dump(2) + "\n"));
  }
  return out;
}

}  // namespace parity::msprobe
