// The parsers against output quoted from real hosts (formats.md §5).
#include "domain/env/parsers.h"

#include <gtest/gtest.h>

namespace parity::env {
namespace {

// vllm-project/vllm-ascend issue #7676 and #12980 (formats.md §5.4), verbatim.
constexpr const char* kNpuSmi = R"(+------------------------------------------------------------------------------------------------+
| npu-smi 25.2.0                   Version: 25.2.0                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B4-1             | OK            | 90.6        32                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          54996/ 65536         |
+===========================+===============+====================================================+
| 1     910B4-1             | Warning       | 87.9        33                0    / 0             |
| 0                         | 0000:C2:00.0  | 3           0    / 0          1024 / 65536         |
+===========================+===============+====================================================+
+---------------------------+---------------+----------------------------------------------------------------------+
| NPU     Chip              | Process id    | Process name       | Process memory(MB)    | Process id in container |
+===========================+===============+======================================================================+
| 0       0                 | 632268        | python3.1          | 197                   | NA                      |
+===========================+===============+======================================================================+
| No running processes found in NPU 1                                                                              |
)";

TEST(NpuSmi, ParsesBoardTableAndSkipsProcesses) {
  NpuSmiInfo info = ParseNpuSmiInfo(kNpuSmi);
  EXPECT_EQ(info.version, "25.2.0");
  ASSERT_EQ(info.devices.size(), 2u);
  const NpuDevice& d0 = info.devices[0];
  EXPECT_EQ(d0.npu, 0);
  EXPECT_EQ(d0.chip, 0);
  EXPECT_EQ(d0.name, "910B4-1");
  EXPECT_EQ(d0.health, "OK");
  EXPECT_EQ(d0.bus_id, "0000:C1:00.0");
  EXPECT_DOUBLE_EQ(*d0.power_w, 90.6);
  EXPECT_DOUBLE_EQ(*d0.temp_c, 32);
  EXPECT_DOUBLE_EQ(*d0.hbm_used_mb, 54996);
  EXPECT_DOUBLE_EQ(*d0.hbm_total_mb, 65536);
  const NpuDevice& d1 = info.devices[1];
  EXPECT_EQ(d1.npu, 1);
  EXPECT_EQ(d1.health, "Warning");
  EXPECT_DOUBLE_EQ(*d1.aicore_pct, 3);
  EXPECT_DOUBLE_EQ(*d1.hbm_used_mb, 1024);
}

TEST(NpuSmi, TableWithoutHbmColumnLeavesItEmpty) {
  const char* text = R"(| npu-smi 23.0.rc1                 Version: 23.0.rc1                                     |
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)                        |
| 3     310P3               | OK            | NA          45                0    / 0             |
| 0                         | 0000:01:00.0  | 0           1532 / 44280                            |
)";
  NpuSmiInfo info = ParseNpuSmiInfo(text);
  ASSERT_EQ(info.devices.size(), 1u);
  EXPECT_EQ(info.devices[0].npu, 3);
  EXPECT_FALSE(info.devices[0].power_w.has_value());  // "NA"
  EXPECT_DOUBLE_EQ(*info.devices[0].memory_used_mb, 1532);
  EXPECT_DOUBLE_EQ(*info.devices[0].memory_total_mb, 44280);
  EXPECT_FALSE(info.devices[0].hbm_total_mb.has_value());
}

TEST(NpuSmi, ErrorTextYieldsNoDevice) {
  EXPECT_TRUE(ParseNpuSmiInfo("dcmi module initialize failed. ret is -8005\n").devices.empty());
}

TEST(VersionCfg, ComponentVersions) {
  auto v = ParseVersionCfg(
      "# version: 1.0\nruntime_running_version=[7.6.0.1.220:8.0.0]\ncompiler_running_version=[7.6.0.1.220:8.0.0]\n"
      "toolkit_running_version=[7.6.0.1.220:8.0.0]\nruntime_upgrade_version=[7.6.0.1.220:8.0.0]\n");
  EXPECT_EQ(v.size(), 3u);  // *_upgrade_version is not the running one
  EXPECT_EQ(v["toolkit"], "8.0.0");
  EXPECT_EQ(v["runtime"], "8.0.0");
}

TEST(InstallInfo, KeyValues) {
  auto kv = ParseKeyValues(
      "package_name=Ascend-cann-toolkit\nversion=8.3.RC2\ninnerversion=V100R001C23SPC002B210\narch=aarch64\n"
      "path=/usr/local/Ascend/ascend-toolkit/8.3.RC2/aarch64-linux\nVersion=\"24.1.rc3\"\n");
  EXPECT_EQ(kv["package_name"], "Ascend-cann-toolkit");
  EXPECT_EQ(kv["version"], "8.3.RC2");
  EXPECT_EQ(kv["Version"], "24.1.rc3");
}

TEST(NvidiaSmi, CsvNoHeaderNoUnits) {
  auto gpus = ParseNvidiaSmiCsv("0, NVIDIA H200 NVL, 143771, 88759, 580.173.02\n1, NVIDIA H200 NVL, 143771, 0, 580.173.02\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].name, "NVIDIA H200 NVL");
  EXPECT_EQ(gpus[1].memory_used_mib, "0");
  EXPECT_EQ(gpus[0].driver_version, "580.173.02");
  EXPECT_TRUE(ParseNvidiaSmiCsv("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.").empty());
}

}  // namespace
}  // namespace parity::env
