#include "domain/ledger/ledger.h"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

namespace parity::ledger {
namespace {

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  return dir;
}

TEST(LedgerTest, AppendsReadsAndUpdates) {
  fs::path dir = FreshDir("parity_ledger_basic");
  Entry e;
  e.tool = "run_training";
  e.action = "train";
  e.side = "baseline";
  e.command = Command{{"bash", "scripts/run_train.sh"}, "/wt", {{"PYTHONHASHSEED", "0"}}, "local"};
  e.outcome = {{"status", "running"}};
  auto id = Append(dir, e);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, "e0001");
  ASSERT_TRUE(Update(dir, *id, {{"outcome", {{"status", "ok"}, {"exit_code", 0}}}}).ok());
  auto m = Read(dir);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)["schema"], kSchema);
  const json& entry = (*m)["entries"][0];
  EXPECT_EQ(entry["outcome"]["status"], "ok");
  EXPECT_EQ(entry["command"]["argv"][1], "scripts/run_train.sh");
  EXPECT_EQ(entry["side"], "baseline");
  EXPECT_TRUE(entry["config"].is_null());
  EXPECT_EQ(Update(dir, "e9999", json::object()).kind(), ErrorKind::kNotFound);
}

TEST(LedgerTest, ConcurrentAppendsLoseNothing) {
  fs::path dir = FreshDir("parity_ledger_concurrent");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        Entry e;
        e.tool = "t" + std::to_string(t);
        e.action = "a";
        ASSERT_TRUE(Append(dir, e).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  auto m = Read(dir);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)["entries"].size(), 40u);
}

TEST(LedgerTest, MissingAndCorruptManifestsAreErrors) {
  fs::path dir = FreshDir("parity_ledger_bad");
  EXPECT_EQ(Read(dir).status().kind(), ErrorKind::kNotFound);
  fs::create_directories(dir);
  { std::ofstream(dir / kManifestName) << "{not json"; }
  EXPECT_EQ(Read(dir).status().kind(), ErrorKind::kFailedPrecondition);
  Entry e;
  e.tool = "x";
  e.action = "y";
  EXPECT_FALSE(Append(dir, e).ok());  // never overwrites a manifest it cannot read
}

// The ledger is a record: 0600, environment values by name only unless recordable, written
// through no symlink, and a nested manifest is a clear error.
TEST(LedgerTest, TheLedgerIsAPrivateRecordWithoutSecretValues) {
  fs::path dir = FreshDir("parity_ledger_private");
  Entry e;
  e.tool = "run_training";
  e.action = "train";
  e.command = Command{{"bash", "run.sh"}, "/wt", {{"PYTHONHASHSEED", "0"}, {"HF_TOKEN", "hf_SECRET"}}, "local"};
  ASSERT_TRUE(Append(dir, e).ok());
  EXPECT_EQ(fs::status(dir / kManifestName).permissions() & (fs::perms::group_all | fs::perms::others_all),
            fs::perms::none);
  std::ifstream in(dir / kManifestName);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find("hf_SECRET"), std::string::npos) << text;
  auto manifest = Read(dir);
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  const json& command = (*manifest)["entries"][0]["command"];
  EXPECT_EQ(command["env"], json({{"PYTHONHASHSEED", "0"}}));
  EXPECT_EQ(command["env_unrecorded"], json({"HF_TOKEN"}));
}

TEST(LedgerTest, ASymlinkedManifestIsRefusedAndItsTargetUntouched) {
  fs::path dir = FreshDir("parity_ledger_link");
  fs::path outside = FreshDir("parity_ledger_link_outside");
  fs::create_directories(dir);
  fs::create_directories(outside);
  { std::ofstream(outside / "victim.json") << "{\"schema\": \"parity.manifest/1\", \"entries\": []}"; }
  fs::create_symlink(outside / "victim.json", dir / kManifestName);
  Entry e;
  e.tool = "x";
  e.action = "y";
  auto id = Append(dir, e);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.status().message().find("is a symlink"), std::string::npos) << id.status().ToString();
  std::ifstream in(outside / "victim.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{\"schema\": \"parity.manifest/1\", \"entries\": []}");
}

TEST(LedgerTest, ANestedManifestIsAClearError) {
  fs::path dir = FreshDir("parity_ledger_nested");
  fs::create_directories(dir);
  { std::ofstream(dir / kManifestName) << "{\"entries\": " << std::string(200000, '[') << std::string(200000, ']') << "}"; }
  auto m = Read(dir);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().kind(), ErrorKind::kFailedPrecondition);
  EXPECT_NE(m.status().message().find("nesting deeper than"), std::string::npos) << m.status().message();
}

}  // namespace
}  // namespace parity::ledger
