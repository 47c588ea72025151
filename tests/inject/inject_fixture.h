// The fixture of the inject tests: a real git repository holding a small PyTorch program
// and a real parity worktree of it (domain/git), removed after each test.
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "domain/git/git_handle.h"
#include "domain/git/refs.h"
#include "domain/git/worktrees.h"
#include "domain/inject/inject.h"
#include "support/subprocess.h"
#include "tests/common/git_cli.h"

namespace parity::inject {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A small PyTorch program: a module with a function and a method, run once on CPU.
constexpr const char* kModel = R"PY("""toy model for probe tests"""
import torch
import torch.nn.functional as F


def scale(x, factor=2.0):
    y = x * factor
    return y, factor


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.approximate = "tanh"

    def forward(self, x):
        h = F.gelu(self.fc1(x), approximate=self.approximate)
        return h.sum(dim=-1)


if __name__ == "__main__":
    torch.manual_seed(0)
    block = Block()
    for _ in range(2):
        out = block(torch.ones(2, 4))
        pair = scale(out)
    print("done", float(out.sum()))
)PY";

inline std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline ProcessResult RunCmd(const std::vector<std::string>& argv, const fs::path& cwd) {
  ProcessOptions o;
  o.argv = argv;
  o.cwd = cwd;
  o.timeout = std::chrono::seconds(120);
  o.env_set = testing_support::GitTestEnv();
  auto r = RunProcess(o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ProcessResult{};
}

class InjectTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("parity-inject-" + std::to_string(rd()) + std::to_string(rd()));
    repo_ = root_ / "toy";
    fs::create_directories(repo_ / "pkg");
    std::ofstream(repo_ / "pkg/model.py", std::ios::binary) << kModel;
    RunCmd({"git", "init", "-q", "-b", "main"}, repo_);
    RunCmd({"git", "add", "-A"}, repo_);
    RunCmd({"git", "commit", "-q", "-m", "toy"}, repo_);
    auto repo = git::OpenRepository(repo_);
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    auto head = git::ResolveCommit(repo->get(), "HEAD");
    ASSERT_TRUE(head.ok());
    worktree_ = root_ / "toy-candidate";
    auto wt = git::AddParityWorktree(repo->get(), worktree_, *head, "candidate");
    ASSERT_TRUE(wt.ok()) << wt.status().ToString();
    original_ = ReadAll(worktree_ / "pkg/model.py");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }

  Options Opts(std::vector<Target> targets) {
    Options o;
    o.worktree = worktree_;
    o.targets = std::move(targets);
    return o;
  }

  fs::path root_, repo_, worktree_;
  std::string original_;
};

// The PARITY_PROBE records a run printed.
inline std::vector<json> ProbeLines(const std::string& out) {
  std::vector<json> probes;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("PARITY_PROBE ", 0) == 0) probes.push_back(json::parse(line.substr(13), nullptr, false));
  }
  return probes;
}

}  // namespace parity::inject
