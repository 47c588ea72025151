// Parsers for what an Ascend / GPU host prints about itself (formats.md §5): `npu-smi info`
// board tables, CANN version.cfg, the key=value *.info install files, and
// `nvidia-smi --query-gpu --format=csv,noheader,nounits`. Pure functions over text; column
// widths vary between driver versions, so the table parser splits on `|` and whitespace
// instead of fixed offsets.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::env {

using json = nlohmann::json;

struct NpuDevice {
  int npu = -1;
  int chip = -1;
  std::string name;    // "910B4-1"
  std::string health;  // "OK", "Warning", ...
  std::string bus_id;
  std::optional<double> power_w, temp_c, aicore_pct;
  std::optional<double> memory_used_mb, memory_total_mb, hbm_used_mb, hbm_total_mb;
};

struct NpuSmiInfo {
  std::string version;  // from the "Version:" cell of the title row
  std::vector<NpuDevice> devices;
};

NpuSmiInfo ParseNpuSmiInfo(std::string_view text);

// version.cfg lines "<component>_running_version=[<inner>:<CANN version>]" -> {component: version}.
std::map<std::string, std::string> ParseVersionCfg(std::string_view text);
// "key=value" lines (ascend_toolkit_install.info, driver version.info); keys kept as written.
std::map<std::string, std::string> ParseKeyValues(std::string_view text);

struct GpuDevice {
  std::string index, name, memory_total_mib, memory_used_mib, driver_version;
};
// Rows of `nvidia-smi --query-gpu=index,name,memory.total,memory.used,driver_version
// --format=csv,noheader,nounits`.
std::vector<GpuDevice> ParseNvidiaSmiCsv(std::string_view text);

json ToJson(const NpuDevice& device);
json ToJson(const GpuDevice& device);

}  // namespace parity::env
