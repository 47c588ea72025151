// The probe run for real on this machine: with the fake Ascend host, and as the CPU-only
// machine it really is. Expected interpreter facts are read from the interpreter itself.
#include "domain/env/probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/env/ascend_fixture.h"

namespace parity::env {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using testing::AscendFixture;

std::vector<std::string> Codes(const json& report) {
  std::vector<std::string> codes;
  for (const auto& a : report["anomalies"]) codes.push_back(a["code"]);
  return codes;
}

const json* FindAnomaly(const json& report, const std::string& code) {
  for (const auto& a : report["anomalies"]) if (a["code"] == code) return &a;
  return nullptr;
}

class ProbeTest : public ::testing::Test {
 protected:
  Result<json> Run(ProbeOptions o) {
    auto host = run::MakeLocalHost();
    return Probe(*host, o);
  }
  AscendFixture fake_;
};

TEST_F(ProbeTest, FakeAscendHostIsFullyDescribed) {
  ProbeOptions o;
  o.search_paths = {fake_.ascend().string()};
  o.dev_dir = fake_.dev().string();
  o.env = fake_.AscendEnv();
  auto r = Run(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const json& p = *r;
  EXPECT_EQ(p["host"], "local");
  EXPECT_EQ(p["cann"]["version"], "8.0.0");
  ASSERT_FALSE(p["cann"]["version_cfg"].empty());
  EXPECT_EQ(p["cann"]["version_cfg"][0]["components"]["hccl"], "8.0.0");
  ASSERT_FALSE(p["cann"]["install_info"].empty());
  EXPECT_EQ(p["cann"]["install_info"][0]["package_name"], "Ascend-cann-toolkit");
  EXPECT_EQ(p["driver"]["version"], "24.1.rc3");

  const json& smi = p["npu"]["npu_smi"];
  EXPECT_TRUE(smi["present"]);
  EXPECT_EQ(smi["exit_code"], "0");
  EXPECT_EQ(smi["version"], "25.2.0");
  ASSERT_EQ(smi["devices"].size(), 2u);
  EXPECT_EQ(smi["devices"][1]["name"], "910B4-1");
  EXPECT_EQ(smi["devices"][1]["bus_id"], "0000:C2:00.0");
  EXPECT_EQ(smi["devices"][0]["hbm_total_mb"], 65536.0);
  EXPECT_EQ(p["npu"]["davinci_count"], 2);
  EXPECT_THAT(p["npu"]["device_nodes"].get<std::vector<std::string>>(), Contains("davinci_manager"));

  EXPECT_EQ(p["env"]["ASCEND_HOME_PATH"], fake_.toolkit_latest().string());
  EXPECT_EQ(p["env"]["HCCL_DETERMINISTIC"], "true");

  // The interpreter is real: torch as it reports itself, torch_npu really absent.
  EXPECT_EQ(p["python"]["torch"], testing::PythonSays("import torch; print(torch.__version__)"));
  EXPECT_EQ(p["python"]["python"], testing::PythonSays("import platform; print(platform.python_version())"));
  EXPECT_TRUE(p["python"]["torch_npu"].is_null());

  // The only anomaly left is the missing torch_npu, with the interpreter's own words.
  EXPECT_EQ(Codes(p), std::vector<std::string>{"torch_npu_import_failed"});
  const json* a = FindAnomaly(p, "torch_npu_import_failed");
  ASSERT_NE(a, nullptr);
  EXPECT_THAT((*a)["evidence"]["output"].get<std::string>(), HasSubstr("No module named 'torch_npu'"));
  EXPECT_EQ(p["accelerator"], "npu (torch_npu missing)");

  const json& s = p["fingerprint"]["summary"];
  EXPECT_EQ(s["cann"], "8.0.0");
  EXPECT_EQ(s["npus"], json::array({"910B4-1", "910B4-1"}));
  EXPECT_EQ(s["env"]["HCCL_DETERMINISTIC"], "true");
  EXPECT_FALSE(s["env"].contains("PATH"));
  EXPECT_EQ(p["fingerprint"]["sha256"].get<std::string>().size(), 64u);
}

TEST_F(ProbeTest, CpuOnlyMachineListsEverySkillAnomalyAndSucceeds) {
  ProbeOptions o;
  o.search_paths = {fake_.empty_dir().string()};
  o.dev_dir = fake_.empty_dir().string();
  auto r = Run(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<std::string> codes = Codes(*r);
  for (const char* expected : {"no_version_cfg", "no_npu", "torch_npu_import_failed", "no_ascend_env"}) {
    EXPECT_THAT(codes, Contains(expected));
  }
  const json* no_npu = FindAnomaly(*r, "no_npu");
  ASSERT_NE(no_npu, nullptr);
  EXPECT_EQ((*no_npu)["evidence"]["npu_smi"], "npu-smi not on PATH");
  const json* no_cfg = FindAnomaly(*r, "no_version_cfg");
  EXPECT_THAT((*no_cfg)["evidence"]["searched"].dump(), HasSubstr(fake_.empty_dir().string()));
  EXPECT_EQ((*r)["accelerator"], "cpu");
  EXPECT_TRUE((*r)["cann"]["version"].is_null());
}

TEST_F(ProbeTest, BrokenNpuSmiIsReportedWithItsOutput) {
  fake_.BreakNpuSmi();
  ProbeOptions o;
  o.search_paths = {fake_.ascend().string()};
  o.dev_dir = fake_.empty_dir().string();
  o.env = fake_.AscendEnv();
  auto r = Run(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const json* failed = FindAnomaly(*r, "npu_smi_failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_THAT((*failed)["evidence"]["output"].get<std::string>(), HasSubstr("dcmi module initialize failed"));
  EXPECT_NE(FindAnomaly(*r, "no_npu"), nullptr);  // and no davinci node either
}

TEST_F(ProbeTest, MissingInterpreterIsAnAnomalyNotACrash) {
  ProbeOptions o;
  o.python = (fake_.root() / "no-such-python").string();
  o.search_paths = {fake_.empty_dir().string()};
  o.dev_dir = fake_.empty_dir().string();
  auto r = Run(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const json* a = FindAnomaly(*r, "python_failed");
  ASSERT_NE(a, nullptr);
  EXPECT_THAT((*a)["evidence"]["output"].get<std::string>(), HasSubstr("no-such-python"));
}

TEST_F(ProbeTest, FingerprintIsStableAndDiffNamesTheChangedVariable) {
  ProbeOptions o;
  o.search_paths = {fake_.ascend().string()};
  o.dev_dir = fake_.dev().string();
  o.env = fake_.AscendEnv();
  auto a = Run(o);
  auto b = Run(o);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)["fingerprint"]["sha256"], (*b)["fingerprint"]["sha256"]);

  o.env["HCCL_DETERMINISTIC"] = "false";
  o.env["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8";
  auto c = Run(o);
  ASSERT_TRUE(c.ok());
  EXPECT_NE((*a)["fingerprint"]["sha256"], (*c)["fingerprint"]["sha256"]);
  json diff = DiffSummaries((*c)["fingerprint"]["summary"], (*a)["fingerprint"]["summary"]);
  ASSERT_EQ(diff.size(), 2u) << diff.dump();
  std::set<std::string> keys;
  for (const auto& d : diff) keys.insert(d["key"]);
  EXPECT_EQ(keys, (std::set<std::string>{"/env/CUBLAS_WORKSPACE_CONFIG", "/env/HCCL_DETERMINISTIC"}));
}

}  // namespace
}  // namespace parity::env
