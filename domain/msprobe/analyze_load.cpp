#include "domain/msprobe/analyze_load.h"

#include <thread>

#include "domain/msprobe/dump_tree.h"

namespace parity::msprobe::analyze_internal {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json DumpJson(const Dump& dump, const DumpFiles& files) {
  json out = {{"dump_json", files.dump_json.string()},
              {"task", dump.task},
              {"level", dump.level},
              {"mode", DumpModeName(dump.mode)},
              {"entries", dump.entries.size()},
              {"rows", dump.rows.size()},
              {"bytes", dump.bytes}};
  out["step"] = files.step ? json(*files.step) : json(nullptr);
  out["rank"] = files.rank ? json(*files.rank) : json(nullptr);
  out["stack_json"] = files.stack_json ? json(files.stack_json->string()) : json(nullptr);
  out["construct_json"] = files.construct_json ? json(files.construct_json->string()) : json(nullptr);
  out["tensor_files"] = files.tensor_files;
  return out;
}

// Each repeat of the baseline is read onto the baseline's pool and compared with it, row by
// row, as the candidate is; the spreads make the envelope the walk judges the candidate by.
// (CheckCalibration has run: noise_dumps come with the calibrated criterion.)
Status MeasureBaselineNoise(const AnalyzeOptions& options, Loaded& loaded, json& described) {
  std::vector<CompareTable> tables;
  loaded.repeats.reserve(options.noise_dumps.size());
  for (size_t i = 0; i < options.noise_dumps.size(); ++i) {
    const std::string where = "baseline repeat " + std::to_string(i + 1) + " (" + options.noise_dumps[i].string() + ")";
    PARITY_ASSIGN_OR_RETURN(DumpFiles files, LocateDump(options.noise_dumps[i], options.step, options.rank));
    auto dump = DumpReader().Read(files.dump_json);
    if (!dump.ok()) return std::move(dump).take_status().Context(where);
    if (dump->mode != loaded.baseline->mode) {
      return InvalidArgument(where + " is a " + DumpModeName(dump->mode) + " dump, the baseline a " +
                             DumpModeName(loaded.baseline->mode) + " one")
          .WithHint("repeat the baseline with the same msprobe config (task, level, summary_mode)");
    }
    loaded.repeats.push_back(std::move(dump).value());
    MoveToPool(loaded.repeats.back(), loaded.baseline->pool);
    described.push_back(DumpJson(loaded.repeats.back(), files));
    if (options.cancel.cancelled()) return Cancelled();
  }
  for (const Dump& repeat : loaded.repeats) {
    auto t = Compare(repeat, *loaded.baseline, options.compare);
    if (!t.ok()) return std::move(t).take_status().Context("comparing a baseline repeat with the baseline");
    tables.push_back(std::move(t).value());
  }
  std::vector<const CompareTable*> pointers;
  for (const auto& t : tables) pointers.push_back(&t);
  loaded.noise = MeasureNoise(*loaded.baseline, pointers, options.noise_safety_factor);
  return Status::Ok();
}

}  // namespace

Status CheckCalibration(const AnalyzeOptions& options) {
  const bool calibrated = options.criteria.mode == DiffCriteria::Mode::kCalibrated;
  if (calibrated != !options.noise_dumps.empty()) {
    return InvalidArgument(calibrated ? "the calibrated criterion needs repeats of the baseline (noise_dumps) to measure "
                                        "its noise"
                                      : "baseline repeats (noise_dumps) are read by the calibrated criterion only");
  }
  if (calibrated && (options.compare_result || options.msprobe_run)) {
    return InvalidArgument("the calibrated criterion compares the dumps themselves (baseline, its repeats, candidate); " +
                           std::string(options.compare_result ? "a compare result" : "msprobe's own run") +
                           " has no dumps to measure the noise in");
  }
  return Status::Ok();
}

Status LoadFromDumps(const AnalyzeOptions& options, Loaded& loaded) {
  PARITY_ASSIGN_OR_RETURN(DumpFiles base_files, LocateDump(*options.baseline_dump, options.step, options.rank));
  PARITY_ASSIGN_OR_RETURN(DumpFiles cand_files, LocateDump(*options.candidate_dump, options.step, options.rank));
  if (options.cancel.cancelled()) return Cancelled();
  // The two files are read at the same time, each into a pool of its own; the candidate is
  // then moved onto the baseline's pool, so the compare matches texts by id.
  std::optional<Result<Dump>> base;
  std::thread baseline_reader([&] {
    try {
      base.emplace(DumpReader().Read(base_files.dump_json));
    } catch (const std::exception& e) {
      base.emplace(Internal(std::string("reading the dump: ") + e.what()));
    }
  });
  auto cand = DumpReader().Read(cand_files.dump_json);
  baseline_reader.join();
  if (!base->ok()) return std::move(*base).take_status().Context("baseline dump");
  if (!cand.ok()) return std::move(cand).take_status().Context("candidate dump");
  if (options.cancel.cancelled()) return Cancelled();
  loaded.baseline = std::move(*base).value();
  loaded.candidate = std::move(cand).value();
  MoveToPool(*loaded.candidate, loaded.baseline->pool);
  if (cand_files.stack_json) {
    auto stacks = ReadStackJson(*cand_files.stack_json);
    if (!stacks.ok()) return std::move(stacks).take_status().Context("candidate stack.json");
    loaded.stacks = std::move(stacks).value();
  }
  if (cand_files.construct_json) {
    auto parents = ReadConstructJson(*cand_files.construct_json);
    if (!parents.ok()) return std::move(parents).take_status().Context("candidate construct.json");
    loaded.parents = std::move(parents).value();
  }
  if (options.cancel.cancelled()) return Cancelled();
  PARITY_ASSIGN_OR_RETURN(CompareTable table, Compare(*loaded.candidate, *loaded.baseline, options.compare));
  loaded.table = std::move(table);
  loaded.mode = loaded.table->mode;
  // Which baseline entry msprobe's names paired with each candidate entry, and the pairing
  // by what each call is; where they differ, the walk compares the aligned pairs.
  std::vector<int64_t> by_name(loaded.candidate->entries.size(), -1);
  for (const CompareRow& r : loaded.table->rows) {
    if (r.bench >= 0) by_name[loaded.candidate->rows[r.npu].entry] = loaded.baseline->rows[r.bench].entry;
  }
  loaded.alignment = AlignEntries(*loaded.candidate, *loaded.baseline, by_name);
  if (loaded.alignment->complete && loaded.alignment->mispaired_total > 0) {
    CompareOptions aligned = options.compare;
    aligned.entry_pairing = &loaded.alignment->bench_of_npu;
    PARITY_ASSIGN_OR_RETURN(CompareTable t, Compare(*loaded.candidate, *loaded.baseline, aligned));
    loaded.aligned_table = std::move(t);
  }
  DiffCriteria criteria = options.criteria;
  json repeats = json::array();
  if (!options.noise_dumps.empty()) {
    PARITY_RETURN_IF_ERROR(MeasureBaselineNoise(options, loaded, repeats));
    criteria.noise = &*loaded.noise;
  }
  loaded.input = FactsFromTable(loaded.aligned_table ? *loaded.aligned_table : *loaded.table, criteria);
  loaded.source = {{"kind", "dumps"},
                   {"baseline", DumpJson(*loaded.baseline, base_files)},
                   {"candidate", DumpJson(*loaded.candidate, cand_files)}};
  if (!repeats.empty()) loaded.source["baseline_repeats"] = std::move(repeats);
  return Status::Ok();
}

Status LoadFromTable(const fs::path& path, Loaded& loaded, const AnalyzeOptions& options) {
  std::string ext = path.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  Result<TextTable> table = ext == ".xlsx" ? ReadCompareXlsx(path) : ReadCompareCsv(path);
  if (!table.ok()) return std::move(table).take_status();
  loaded.text_table = std::move(table).value();
  PARITY_ASSIGN_OR_RETURN(loaded.mode, ModeOfTable(*loaded.text_table, path.string()));
  PARITY_ASSIGN_OR_RETURN(loaded.input, FactsFromTextTable(*loaded.text_table, options.criteria, path.string()));
  int stack_col = loaded.text_table->Column("NPU_Stack_Info");
  if (stack_col >= 0) {
    for (size_t i = 0; i < loaded.text_table->rows.size(); ++i) {
      const std::string& cell = loaded.text_table->rows[i][stack_col];
      if (cell.empty() || cell == "N/A") continue;
      auto frames = ParsePyStrList(cell);
      if (!frames) continue;
      std::string entry(loaded.input.entries[loaded.input.rows[i].entry]);
      loaded.csv_stacks.emplace(entry, std::move(*frames));
    }
  }
  loaded.source = {{"kind", "compare_result"},
                   {"compare_result", path.string()},
                   {"format", ext == ".xlsx" ? "xlsx" : "csv"},
                   {"rows", loaded.text_table->rows.size()},
                   {"order", "table order (msprobe 26 writes dump order; msprobe 8.x may sort rows by name)"}};
  return Status::Ok();
}

Status LoadFromMsprobeRun(const AnalyzeOptions& options, Loaded& loaded) {
  PARITY_ASSIGN_OR_RETURN(DumpFiles base_files, LocateDump(*options.baseline_dump, options.step, options.rank));
  PARITY_ASSIGN_OR_RETURN(DumpFiles cand_files, LocateDump(*options.candidate_dump, options.step, options.rank));
  MsprobeRunOptions run = *options.msprobe_run;
  run.target = cand_files.dump_json;
  run.golden = base_files.dump_json;
  if (run.output_dir.empty()) {
    if (options.output_dir.empty()) return InvalidArgument("running msprobe compare needs an output folder");
    run.output_dir = options.output_dir / "msprobe_compare";
  }
  run.cancel = options.cancel;
  PARITY_ASSIGN_OR_RETURN(MsprobeRunResult result, RunMsprobeCompare(run));
  PARITY_RETURN_IF_ERROR(LoadFromTable(result.result_file, loaded, options));
  if (cand_files.construct_json) {
    auto parents = ReadConstructJson(*cand_files.construct_json);
    if (!parents.ok()) return std::move(parents).take_status().Context("candidate construct.json");
    loaded.parents = std::move(parents).value();
  }
  json table_source = loaded.source;
  loaded.source = {{"kind", "msprobe_run"},
                   {"msprobe",
                    {{"argv", result.argv},
                     {"env", result.env},
                     {"exit_code", result.exit_code},
                     {"duration_s", result.duration_s},
                     {"result_file", result.result_file.string()},
                     {"log_file", result.log_file.string()}}},
                   {"baseline_dump_json", base_files.dump_json.string()},
                   {"candidate_dump_json", cand_files.dump_json.string()},
                   {"compare_result", table_source}};
  loaded.table_file = result.result_file.string();
  return Status::Ok();
}
}  // namespace parity::msprobe::analyze_internal
