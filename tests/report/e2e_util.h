// Helpers for render_report's end-to-end tests: the fixture report directories (real
// toy-trainer runs, built by make_report_dir.py), private copies of them, and running
// real programs (pdftoppm, chromium, python) with a timeout.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/subprocess.h"

namespace parity::report::testing {

// "refactor" (PASS), "gelu_tanh" (FAIL), "ulp_loss_order" (INCONCLUSIVE).
std::filesystem::path FixtureReportDir(const std::string& fixture_case);

// A fresh private copy of a fixture report directory, so tests can write into it.
std::filesystem::path CopyReportDir(const std::string& fixture_case, const std::string& test_name);

// A new empty directory under the test's scratch root.
std::filesystem::path ScratchDir(const std::string& name);

std::string Slurp(const std::filesystem::path& path);
nlohmann::json ReadJson(const std::filesystem::path& path);

// Runs argv; fails the calling test (ADD_FAILURE) and returns an empty result when it
// cannot start. Output is merged.
ProcessResult RunOrFail(const std::vector<std::string>& argv, int timeout_s = 120);

// A loopback TCP port nobody listens on right now.
int FreePort();

}  // namespace parity::report::testing
