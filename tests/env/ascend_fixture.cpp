#include "tests/env/ascend_fixture.h"

#include <cstdlib>
#include <fstream>

#include "support/subprocess.h"

namespace parity::testing {

namespace fs = std::filesystem;

namespace {

constexpr const char* kNpuSmiScript = R"(#!/bin/sh
# Stand-in for npu-smi on a host with two 910B4 NPUs (output format: formats.md §5.4).
[ "$1" = info ] || { echo "usage: npu-smi info" >&2; exit 2; }
cat <<'TABLE'
+------------------------------------------------------------------------------------------------+
| npu-smi 25.2.0                   Version: 25.2.0                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B4-1             | OK            | 90.6        32                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          54996/ 65536         |
+===========================+===============+====================================================+
| 1     910B4-1             | OK            | 87.9        32                0    / 0             |
| 0                         | 0000:C2:00.0  | 0           0    / 0          54996/ 65536         |
+===========================+===============+====================================================+
TABLE
)";

}  // namespace

std::string WriteFile(const fs::path& path, const std::string& text, bool executable) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
  if (executable) fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  return path.string();
}

std::string PythonSays(const std::string& code) {
  ProcessOptions o;
  o.argv = {"/usr/bin/python3", "-c", code};
  o.timeout = std::chrono::seconds(120);
  auto r = RunProcess(o);
  if (!r.ok()) return "<python failed to start>";
  std::string out = r->out;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

AscendFixture::AscendFixture() {
  char tmpl[] = "/tmp/parity-ascend-XXXXXX";
  root_ = ::mkdtemp(tmpl);
  fs::path tk = root_ / "Ascend/ascend-toolkit";
  WriteFile(tk / "8.0.0/version.cfg",
            "# version: 1.0\nruntime_running_version=[7.6.0.1.220:8.0.0]\ncompiler_running_version=[7.6.0.1.220:8.0.0]\n"
            "hccl_running_version=[7.6.0.1.220:8.0.0]\ntoolkit_running_version=[7.6.0.1.220:8.0.0]\n"
            "runtime_upgrade_version=[7.6.0.1.220:8.0.0]\n");
  WriteFile(tk / "8.0.0/x86_64-linux/ascend_toolkit_install.info",
            "package_name=Ascend-cann-toolkit\nversion=8.0.0\ninnerversion=V100R001C20SPC001B251\narch=x86_64\nos=linux\n"
            "path=/usr/local/Ascend/ascend-toolkit/8.0.0/x86_64-linux\n");
  fs::create_directory_symlink("8.0.0", tk / "latest");
  fs::create_directories(tk / "8.0.0/runtime");
  WriteFile(root_ / "Ascend/driver/version.info",
            "Version=24.1.rc3\nascendhal_version=7.35.23\naicpu_version=1.0\ntdt_version=1.0\nlog_version=1.0\n"
            "prof_version=2.0\ndvppkernels_version=1.1\ntsfw_version=1.0\nInnerversion=V100R001C19SPC001B124\n"
            "compatible_version=[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19]\n"
            "compatible_version_fw=[7.0.0,7.5.99]\npackage_version=24.1.rc3\n");
  WriteFile(root_ / "bin/npu-smi", kNpuSmiScript, true);
  for (const char* node : {"davinci0", "davinci1", "davinci_manager", "devmm_svm", "hisi_hdc", "null"}) {
    WriteFile(root_ / "dev" / node, "");
  }
  fs::create_directories(empty_dir());
}

AscendFixture::~AscendFixture() {
  std::error_code ec;
  fs::remove_all(root_, ec);
}

std::map<std::string, std::string> AscendFixture::AscendEnv() const {
  const char* path = std::getenv("PATH");
  return {{"PATH", (root_ / "bin").string() + ":" + (path ? path : "/usr/bin:/bin")},
          {"ASCEND_HOME_PATH", toolkit_latest().string()},
          {"ASCEND_TOOLKIT_HOME", toolkit_latest().string()},
          {"HCCL_DETERMINISTIC", "true"}};
}

void AscendFixture::BreakNpuSmi() {
  WriteFile(root_ / "bin/npu-smi",
            "#!/bin/sh\necho 'dcmi module initialize failed. ret is -8005'\nexit 1\n", true);
}

}  // namespace parity::testing
