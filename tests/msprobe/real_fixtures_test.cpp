// On real msprobe output (tests/fixtures/msprobe-real): baseline and candidate differ
// only in one GELU call (train.py line 64). parity must name Functional.gelu.0.forward and
// train.py:64 in every mode, write a table that agrees cell for cell with the real
// `msprobe compare` CSV, and report the md5 noise of the baseline rerun as noise.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>

#include "domain/msprobe/analyze.h"
#include "domain/msprobe/compare_csv.h"
#include "domain/msprobe/dump.h"
#include "domain/msprobe/stack.h"
#include "tests/msprobe/fixtures.h"

namespace parity::msprobe {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::MsprobeFixtures;
using testing::ExpectTableMatches;
using testing::TempDir;

const char* kConfigs[] = {"statistics_L1", "statistics_mix", "md5_L1", "md5_mix", "tensor_L1"};

fs::path OnlyFile(const fs::path& dir, const std::string& ext) {
  for (const auto& f : fs::directory_iterator(dir)) {
    std::string name = f.path().filename().string();
    if (f.path().extension() == ext && name.find("openpyxl") == std::string::npos) return f.path();
  }
  ADD_FAILURE() << "no *" << ext << " in " << dir;
  return {};
}

Result<json> AnalyzeConfig(const fs::path& fixtures, const std::string& config, const fs::path& out,
                           DiffCriteria criteria = {}, int step = 0, bool table = false) {
  AnalyzeOptions options;
  options.write_compare_table = table;
  options.baseline_dump = fixtures / "dumps/baseline" / config;
  options.candidate_dump = fixtures / "dumps/candidate" / config;
  options.step = step;
  options.criteria = criteria;
  options.locate.worktree = fixtures;  // train.py is there; found by suffix matching
  options.output_dir = out;
  return AnalyzeFirstDiff(options);
}

// A fixture pair's step 0 read and compared as the tool does, with the candidate's stacks.
struct ComparedPair {
  Dump base, cand;
  std::optional<CompareTable> table;  // points into base and cand: the pair is not moved
  StackIndex stacks;
};

std::unique_ptr<ComparedPair> ReadAndCompare(const fs::path& fixtures, const std::string& config) {
  const fs::path rank = "step0/rank0";
  auto base = DumpReader().Read(fixtures / "dumps/baseline" / config / rank / "dump.json");
  auto cand = DumpReader().Read(fixtures / "dumps/candidate" / config / rank / "dump.json");
  auto stacks = ReadStackJson(fixtures / "dumps/candidate" / config / rank / "stack.json");
  if (!base.ok() || !cand.ok() || !stacks.ok()) {
    ADD_FAILURE() << "cannot read the " << config << " pair";
    return nullptr;
  }
  auto pair = std::make_unique<ComparedPair>();
  pair->base = std::move(base).value();
  pair->cand = std::move(cand).value();
  pair->stacks = std::move(stacks).value();
  MoveToPool(pair->cand, pair->base.pool);
  auto table = Compare(pair->cand, pair->base, {});
  if (!table.ok()) {
    ADD_FAILURE() << table.status().ToString();
    return nullptr;
  }
  pair->table = std::move(table).value();
  return pair;
}

void ExpectGeluAtLine64(const json& hunt, const std::string& config) {
  SCOPED_TRACE(config);
  ASSERT_TRUE(hunt["found"].get<bool>()) << hunt.dump(2);
  const json& first = hunt["first_divergence"];
  EXPECT_EQ(first["api"], "Functional.gelu.0.forward");
  // The tensor input is equal, the keyword argument approximate differs: the argument is the cause.
  EXPECT_EQ(first["verdict"], "argument");
  EXPECT_EQ(first["cause"]["kind"], "argument");
  EXPECT_TRUE(first["inputs_equal"].get<bool>());
  ASSERT_TRUE(first["user_frame"].is_object()) << first.dump(2);
  // The .xlsx fixtures keep the path of the machine that ran msprobe (only the CSV/JSON
  // files were rewritten to the training-host form), so compare the file name.
  EXPECT_EQ(fs::path(first["user_frame"]["file"].get<std::string>()).filename(), "train.py");
  EXPECT_EQ(first["user_frame"]["line"], 64);
  EXPECT_EQ(first["user_frame"]["function"], "forward");
  // The changed keyword argument is named, with both values.
  ASSERT_FALSE(first["differing_arguments"].empty());
  EXPECT_NE(first["differing_arguments"][0].dump().find("approximate"), std::string::npos);
}

TEST(RealFixtures, NamesGeluAndTrainPyLine64InEveryMode) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  for (const char* config : kConfigs) {
    TempDir out;
    auto hunt = AnalyzeConfig(fixtures, config, out.path());
    ASSERT_TRUE(hunt.ok()) << config << ": " << hunt.status().ToString();
    ExpectGeluAtLine64(*hunt, config);
    const json& source = (*hunt)["first_divergence"]["source"];
    EXPECT_EQ(source["mapped_by"], "suffix") << source.dump(2);
    EXPECT_EQ(fs::path(source["local_file"].get<std::string>()), fixtures / "train.py");
    EXPECT_TRUE(source["matches_recorded"].get<bool>()) << source.dump(2);
    EXPECT_TRUE(fs::exists(out.path() / "hunt.json"));
    // Not asked for: the table is not written.
    EXPECT_FALSE(fs::exists(out.path() / "compare_table.csv"));
    EXPECT_TRUE((*hunt)["compare_table"].is_null());
  }
}

TEST(RealFixtures, TensorModeNotesTheTensorFiles) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  TempDir out;
  auto hunt = AnalyzeConfig(fixtures, "tensor_L1", out.path());
  ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
  EXPECT_EQ((*hunt)["mode"], "all");
  EXPECT_GT((*hunt)["source"]["candidate"]["tensor_files"].get<int>(), 100);
  EXPECT_TRUE((*hunt)["real_data_metrics"].is_string());
}

TEST(RealFixtures, CompareTableAgreesWithMsprobeRowForRow) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  for (const char* config : kConfigs) {
    TempDir out;
    auto hunt = AnalyzeConfig(fixtures, config, out.path(), {}, 0, true);
    ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
    EXPECT_EQ((*hunt)["compare_table"], (out.path() / "compare_table.csv").string());
    ExpectTableMatches(out.path() / "compare_table.csv",
                       OnlyFile(fixtures / "compare" / config / "candidate/step0_dir", ".csv"),
                       std::string(config) == "tensor_L1");
  }
}

std::string FileText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The table written on request, on its own thread while the answer is worked out, is the
// one WriteCompareCsv writes from the same compare, byte for byte (the table of before the
// answer-first change: the CSV writer itself is unchanged).
TEST(RealFixtures, TableOnRequestIsTheSynchronousTableByteForByte) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  for (const char* config : kConfigs) {
    SCOPED_TRACE(config);
    TempDir out;
    auto hunt = AnalyzeConfig(fixtures, config, out.path(), {}, 0, true);
    ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
    auto pair = ReadAndCompare(fixtures, config);
    ASSERT_TRUE(pair);
    ASSERT_TRUE(WriteCompareCsv(*pair->table, &pair->stacks, out.path() / "direct.csv").ok());
    std::string written = FileText(out.path() / "compare_table.csv");
    EXPECT_GT(written.size(), 10000u);
    EXPECT_TRUE(written == FileText(out.path() / "direct.csv"));
  }
}

// The table is formatted in blocks by several threads and written in order: whatever the
// block size and the number of threads (blocks of one row, blocks that split an API's rows,
// so that its stack is written on its first row only, more threads than blocks), the file
// is the one a single pass writes, byte for byte, in every mode.
TEST(RealFixtures, TableFormattedInBlocksOnSeveralThreadsIsTheOnePassTable) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  for (const char* config : kConfigs) {
    SCOPED_TRACE(config);
    TempDir out;
    auto pair = ReadAndCompare(fixtures, config);
    ASSERT_TRUE(pair);
    const CompareTable& table = *pair->table;
    const StackIndex* stacks = &pair->stacks;
    ASSERT_GT(table.rows.size(), 100u);
    ASSERT_TRUE(WriteCompareCsv(table, stacks, out.path() / "one_pass.csv", {.threads = 1, .block_rows = 1u << 30}).ok());
    const std::string one_pass = FileText(out.path() / "one_pass.csv");
    EXPECT_EQ(std::count(one_pass.begin(), one_pass.end(), '\n'), static_cast<long>(table.rows.size()) + 1);
    for (CsvWriteOptions options : {CsvWriteOptions{3, 1}, CsvWriteOptions{2, 7}, CsvWriteOptions{4, 64},
                                    CsvWriteOptions{8, table.rows.size() / 3}, CsvWriteOptions{}}) {
      SCOPED_TRACE(std::to_string(options.threads) + " threads, blocks of " + std::to_string(options.block_rows));
      ASSERT_TRUE(WriteCompareCsv(table, stacks, out.path() / "blocks.csv", options).ok());
      EXPECT_TRUE(FileText(out.path() / "blocks.csv") == one_pass);
    }
  }
}

// One pair's column of the heatmap: modules at mix level, call sites at L1 (line 64 calls
// fc1's linear first, then the GELU: "#2"); the changed GELU's
// layer is the marked cell and differs, the layers before the GELU are equal.
TEST(RealFixtures, HeatmapOfOnePairMarksTheGeluLayer) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  const std::pair<const char*, const char*> cases[] = {{"statistics_mix", "block.ffn.FFN"},
                                                       {"statistics_L1", "train.py:64 forward #2"}};
  for (const auto& [config, layer] : cases) {
    SCOPED_TRACE(config);
    TempDir out;
    auto hunt = AnalyzeConfig(fixtures, config, out.path());
    ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
    const json& heat = (*hunt)["heatmap"];
    EXPECT_EQ(heat["kind"], std::string(config) == "statistics_mix" ? "module" : "call_site");
    ASSERT_EQ(heat["columns"].size(), 1u);
    EXPECT_EQ(heat["columns"][0]["label"], "step0");
    ASSERT_TRUE(heat["first_cell"].is_object()) << heat.dump(2);
    const size_t row = heat["first_cell"]["row"];
    EXPECT_EQ(heat["rows"][row], layer) << heat["rows"].dump();
    EXPECT_GT(heat["values"][row][0].get<double>(), 0);
    if (std::string(config) != "statistics_mix") continue;
    // Modules are listed as they finish: the FFN's fc1 (before the GELU) and everything before
    // it are equal, its fc2 (after the GELU) differs.
    size_t fc1 = 0, fc2 = 0;
    for (size_t r = 0; r < heat["rows"].size(); ++r) {
      if (heat["rows"][r] == "block.ffn.fc1.Linear") fc1 = r;
      if (heat["rows"][r] == "block.ffn.fc2.Linear") fc2 = r;
    }
    ASSERT_LT(fc1, fc2);
    EXPECT_LT(fc2, row);
    for (size_t r = 0; r <= fc1; ++r) EXPECT_EQ(heat["values"][r][0], 0.0) << heat["rows"][r];
    EXPECT_GT(heat["values"][fc2][0].get<double>(), 0);
  }
}

TEST(RealFixtures, StepOneAgreesToo) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  TempDir out;
  auto hunt = AnalyzeConfig(fixtures, "statistics_L1", out.path(), {}, 1, true);
  ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
  EXPECT_EQ((*hunt)["source"]["candidate"]["step"], 1);
  ExpectTableMatches(out.path() / "compare_table.csv",
                     OnlyFile(fixtures / "compare/statistics_L1/candidate/step1_json", ".csv"), false);
}

TEST(RealFixtures, BaselineRerunMd5MismatchIsNoiseNotADivergence) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  TempDir out;
  AnalyzeOptions options;
  options.baseline_dump = fixtures / "dumps/baseline/md5_L1";
  options.candidate_dump = fixtures / "dumps/baseline/md5_L1_rerun";
  options.step = 0;
  options.output_dir = out.path();
  options.write_compare_table = true;
  auto hunt = AnalyzeFirstDiff(options);
  ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
  EXPECT_FALSE((*hunt)["found"].get<bool>()) << (*hunt)["first_divergence"].dump(2);
  ASSERT_EQ((*hunt)["noise"].size(), 1u) << (*hunt)["noise"].dump(2);
  EXPECT_EQ((*hunt)["noise"][0]["api"], "Tensor.add_.11.forward");
  // The baseline's CRC of the input is its own output's (equal on both sides): hashed after add_.
  EXPECT_EQ((*hunt)["noise"][0]["kind"], "crc_after_inplace");
  EXPECT_EQ((*hunt)["noise"][0]["later_row"], "Tensor.add_.11.forward.output.0");
  EXPECT_EQ((*hunt)["noise"][0]["hashed_late_on"], "baseline");
  EXPECT_EQ((*hunt)["noise"][0]["row"]["name"], "Tensor.add_.11.forward.input.0");
  ExpectTableMatches(out.path() / "compare_table.csv",
                     OnlyFile(fixtures / "compare/md5_L1/baseline_rerun/step0_json", ".csv"), false);
}

TEST(RealFixtures, ReadsMsprobeCompareResultsCsvAndXlsx) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  for (const char* config : kConfigs) {
    for (const char* form : {"step0_dir", "step0_json_xlsx"}) {
      AnalyzeOptions options;
      std::string f = form;
      options.compare_result = OnlyFile(fixtures / "compare" / config / "candidate" / form, f == "step0_dir" ? ".csv" : ".xlsx");
      auto hunt = AnalyzeFirstDiff(options);
      ASSERT_TRUE(hunt.ok()) << config << "/" << form << ": " << hunt.status().ToString();
      ExpectGeluAtLine64(*hunt, std::string(config) + "/" + form);
    }
  }
}

TEST(RealFixtures, XlsxCellsMatchWhatOpenpyxlRead) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  fs::path dir = fixtures / "compare/md5_L1/candidate/step0_json_xlsx";
  auto xlsx = ReadCompareXlsx(OnlyFile(dir, ".xlsx"));
  ASSERT_TRUE(xlsx.ok()) << xlsx.status().ToString();
  fs::path reference;
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.path().string().find(".openpyxl.csv") != std::string::npos) reference = f.path();
  }
  auto csv = ReadCompareCsv(reference);
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  ASSERT_EQ(xlsx->rows.size(), csv->rows.size());
  // (NPU_Stack_Info is left out: the fixture's .openpyxl.csv had its paths rewritten, the .xlsx not.)
  for (const char* column : {"NPU Name", "Bench Name", "NPU MD5", "BENCH MD5", "Result", "Err_message"}) {
    int a = xlsx->Column(column), b = csv->Column(column);
    ASSERT_GE(a, 0) << column;
    ASSERT_GE(b, 0) << column;
    for (size_t r = 0; r < csv->rows.size(); ++r) EXPECT_EQ(xlsx->rows[r][a], csv->rows[r][b]) << column << " row " << r;
  }
}

TEST(RealFixtures, CriteriaAndFuzzyMatchingAgreeOnTheAnswer) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  DiffCriteria bitwise;
  bitwise.mode = DiffCriteria::Mode::kBitwise;
  DiffCriteria tolerance;
  tolerance.mode = DiffCriteria::Mode::kTolerance;
  tolerance.rel_tol = 1e-2;  // the GELU output moves by ~1e-4 relative: within; the argument still differs
  for (const auto& criteria : {bitwise, tolerance}) {
    TempDir out;
    auto hunt = AnalyzeConfig(fixtures, "statistics_L1", out.path(), criteria);
    ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
    ExpectGeluAtLine64(*hunt, CriteriaModeName(criteria.mode));
  }
  TempDir out;
  AnalyzeOptions options;
  options.baseline_dump = fixtures / "dumps/baseline/statistics_mix/step0/rank0/dump.json";
  options.candidate_dump = fixtures / "dumps/candidate/statistics_mix/step0/rank0";
  options.compare.fuzzy = true;
  options.output_dir = out.path();
  auto hunt = AnalyzeFirstDiff(options);
  ASSERT_TRUE(hunt.ok()) << hunt.status().ToString();
  ExpectGeluAtLine64(*hunt, "fuzzy");
  EXPECT_EQ((*hunt)["counts"]["unmatched_candidate"], 0);
}

TEST(RealFixtures, MissingPiecesAreClearErrors) {
  fs::path fixtures = MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  AnalyzeOptions options;
  options.baseline_dump = fixtures / "dumps/baseline/statistics_L1";
  options.candidate_dump = fixtures / "dumps/candidate/md5_L1";
  auto mixed = AnalyzeFirstDiff(options);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("different modes"), std::string::npos) << mixed.status().message();
  options.candidate_dump = fixtures / "dumps/candidate/statistics_L1";
  options.step = 7;
  auto no_step = AnalyzeFirstDiff(options);
  ASSERT_FALSE(no_step.ok());
  EXPECT_NE(no_step.status().message().find("no step7 (present: step0, step1)"), std::string::npos)
      << no_step.status().message();
  options.step.reset();
  options.rank = 3;
  auto no_rank = AnalyzeFirstDiff(options);
  ASSERT_FALSE(no_rank.ok());
  EXPECT_NE(no_rank.status().message().find("no rank3"), std::string::npos) << no_rank.status().message();
}

}  // namespace
}  // namespace parity::msprobe
