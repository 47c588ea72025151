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

}  // namespace
}  // namespace parity::ledger
