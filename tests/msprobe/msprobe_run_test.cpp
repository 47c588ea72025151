// run_msprobe: the real `msprobe compare` run by parity. msprobe is not installed here, so
// the not-installed errors are tested as they are; the real run needs a local source copy
// of msprobe (never committed: see tests/fixtures/msprobe-real/README.md) named by
// PARITY_MSPROBE_PYTHONPATH (msprobe's python/ folder and einops, joined with ':'), and is
// skipped without it.
#include <cstdlib>

#include <gtest/gtest.h>

#include "domain/ledger/ledger.h"
#include "domain/msprobe/analyze.h"
#include "domain/msprobe/run_compare.h"
#include "mcp-server/tool.h"
#include "support/subprocess.h"
#include "tests/common/fake_tool_context.h"
#include "tests/msprobe/fixtures.h"
#include "tools/msprobe_first_diff/msprobe_first_diff.h"

namespace parity::msprobe {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::TempDir;

constexpr const char* kPython = "/usr/bin/python3";

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

MsprobeRunOptions OnFixtures(const fs::path& fixtures, const fs::path& out) {
  MsprobeRunOptions run;
  run.target = fixtures / "dumps/candidate/statistics_L1/step0/rank0/dump.json";
  run.golden = fixtures / "dumps/baseline/statistics_L1/step0/rank0/dump.json";
  run.output_dir = out;
  run.timeout = std::chrono::seconds(120);
  return run;
}

TEST(MsprobeRun, NoMsprobeOnPathSaysSoAndHowToInstall) {
  fs::path fixtures = testing::MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  TempDir empty, out;
  ScopedEnv path("PATH", empty.path().string());
  auto run = RunMsprobeCompare(OnFixtures(fixtures, out.path()));
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().kind(), ErrorKind::kFailedPrecondition);
  EXPECT_NE(run.status().message().find("msprobe is not installed"), std::string::npos) << run.status().ToString();
  EXPECT_NE(run.status().hint().find("pip install mindstudio-probe"), std::string::npos) << run.status().ToString();
}

TEST(MsprobeRun, InterpreterWithoutMsprobeSaysSo) {
  fs::path fixtures = testing::MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  TempDir empty, out;
  ProcessOptions probe;
  probe.argv = {kPython, "-c", "import msprobe"};
  probe.env_set["PYTHONPATH"] = empty.path().string();
  auto importable = RunProcess(probe);
  ASSERT_TRUE(importable.ok());
  if (importable->success()) GTEST_SKIP() << kPython << " can import msprobe here; the not-installed case cannot be seen";

  MsprobeRunOptions options = OnFixtures(fixtures, out.path());
  options.python = kPython;
  options.python_path = empty.path().string();
  auto run = RunMsprobeCompare(options);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().kind(), ErrorKind::kFailedPrecondition);
  EXPECT_NE(run.status().message().find("msprobe is not installed for /usr/bin/python3"), std::string::npos)
      << run.status().ToString();
  EXPECT_NE(run.status().ToString().find("-m msprobe.msprobe compare -tp"), std::string::npos)
      << run.status().ToString();  // the command, as evidence
  EXPECT_NE(run.status().hint().find("msprobe_python"), std::string::npos);

  options.python = "/nonexistent/python3";
  auto missing = RunMsprobeCompare(options);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().kind(), ErrorKind::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/python3"), std::string::npos);
}

TEST(MsprobeRun, ToolArgumentsAndTheFailureInTheLedger) {
  fs::path fixtures = testing::MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  TempDir report;
  parity::testing::FakeContext ctx(report.path());
  auto tool = tools::MakeMsprobeFirstDiffTool();
  auto both = tool.handler(json{{"compare_result", "/x.csv"}, {"run_msprobe", true}}, ctx);
  EXPECT_TRUE(both.is_error);
  EXPECT_NE(both.content.dump().find("arguments.run_msprobe"), std::string::npos) << both.content.dump();
  auto stray = tool.handler(json{{"compare_result", "/x.csv"}, {"msprobe_python", kPython}}, ctx);
  EXPECT_TRUE(stray.is_error);
  EXPECT_NE(stray.content.dump().find("arguments.msprobe_python"), std::string::npos) << stray.content.dump();

  json args = {{"baseline_dump", (fixtures / "dumps/baseline/statistics_L1").string()},
               {"candidate_dump", (fixtures / "dumps/candidate/statistics_L1").string()},
               {"step", 0},
               {"run_msprobe", true},
               {"msprobe_python", "/nonexistent/python3"},
               {"report_dir", report.path().string()}};
  ctx.answer_user(mcp::ElicitAnswer::Action::kAccept);  // an interpreter outside the policy: the user accepts it
  auto failed = tool.handler(args, ctx);
  EXPECT_TRUE(failed.is_error);
  EXPECT_NE(failed.content.dump().find("/nonexistent/python3"), std::string::npos) << failed.content.dump();
  auto manifest = ledger::Read(report.path());
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  const json& entry = (*manifest)["entries"].back();
  EXPECT_EQ(entry["outcome"]["status"], "failed");
  EXPECT_EQ(entry["inputs"]["run_msprobe"], true);
}

TEST(MsprobeRun, RealMsprobeCompareAgreesWithParitysTable) {
  const char* msprobe_path = std::getenv("PARITY_MSPROBE_PYTHONPATH");
  if (!msprobe_path || !*msprobe_path) {
    GTEST_SKIP() << "set PARITY_MSPROBE_PYTHONPATH to a local msprobe (python/) and einops copy to run it";
  }
  fs::path fixtures = testing::MsprobeFixtures();
  ASSERT_FALSE(fixtures.empty());
  auto tool = tools::MakeMsprobeFirstDiffTool();
  for (const char* config : {"statistics_L1", "md5_L1"}) {
    SCOPED_TRACE(config);
    TempDir report, own;
    parity::testing::FakeContext ctx(report.path());
    json args = {{"baseline_dump", (fixtures / "dumps/baseline" / config).string()},
                 {"candidate_dump", (fixtures / "dumps/candidate" / config).string()},
                 {"step", 0},
                 {"worktree", fixtures.string()},
                 {"report_dir", report.path().string()}};
    json with_msprobe = args;
    with_msprobe["run_msprobe"] = true;
    with_msprobe["msprobe_python"] = kPython;
    with_msprobe["msprobe_pythonpath"] = msprobe_path;
    with_msprobe["msprobe_timeout_s"] = 300;
    auto result = tool.handler(with_msprobe, ctx);
    ASSERT_FALSE(result.is_error) << result.content.dump();
    const json& hunt = result.structured;
    ASSERT_EQ(hunt["source"]["kind"], "msprobe_run") << hunt["source"].dump(2);
    EXPECT_EQ(hunt["source"]["msprobe"]["exit_code"], 0);
    fs::path msprobe_csv = hunt["source"]["msprobe"]["result_file"].get<std::string>();
    EXPECT_TRUE(fs::exists(msprobe_csv));
    EXPECT_EQ(hunt["compare_table"], msprobe_csv.string());
    ASSERT_TRUE(hunt["found"].get<bool>()) << hunt.dump(2);
    EXPECT_EQ(hunt["first_divergence"]["api"], "Functional.gelu.0.forward");
    ASSERT_TRUE(hunt["first_divergence"]["user_frame"].is_object());
    EXPECT_EQ(hunt["first_divergence"]["user_frame"]["line"], 64);

    auto manifest = ledger::Read(report.path());
    ASSERT_TRUE(manifest.ok());
    const json& entry = (*manifest)["entries"].back();
    // msprobe's command is evidence in the outcome; parity reproduce replays the call itself.
    EXPECT_FALSE(entry.contains("command") && entry["command"].is_object()) << entry.dump(2);
    EXPECT_NE(entry["outcome"]["msprobe"]["argv"].dump().find("\"compare\""), std::string::npos) << entry.dump(2);
    EXPECT_EQ(entry["outcome"]["msprobe"]["env"][0], std::string("PYTHONPATH=") + msprobe_path);
    EXPECT_EQ(entry["inputs"]["run_msprobe"], true);

    // msprobe's own table and parity's, cell for cell.
    args["report_dir"] = own.path().string();
    args["compare_table"] = true;
    auto mine = tool.handler(args, ctx);
    ASSERT_FALSE(mine.is_error) << mine.content.dump();
    testing::ExpectTableMatches(own.path() / "hunt/compare_table.csv", msprobe_csv, false);
  }
}

}  // namespace
}  // namespace parity::msprobe
