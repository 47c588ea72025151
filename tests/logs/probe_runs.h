// Real PARITY_PROBE lines for the logs tests: inject_prints' helper
// (domain/inject/probe_helper.py) rendered the way domain/inject does (rank and calls
// substituted), imported by a small PyTorch script run under /usr/bin/python3 (Debian's
// torch). Each run's stdout is the "training log".
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "support/subprocess.h"
#include "tests/logs/test_util.h"

namespace parity::logs::testing {

// step: 1..2; p0 (optional before-probe), p1 before/after a matmul, p2 the scaled relu
// (the value the candidate changes), p3 a tuple holding the scale, p5 a tensor with a NaN;
// a torchtitan metric line per step unless "quiet".
inline constexpr const char* kProbedScript = R"PY(
import sys
import torch
import _parity_probe as _pp

scale = float(sys.argv[1])
flags = sys.argv[2:]
torch.manual_seed(0)
x = torch.randn(4, 3)
w = torch.randn(3, 2)
for step in range(1, 3):
    if "with_p0" in flags:
        _pp.probe("p0", "train.py:14", "before", "x0", x)
    _pp.probe("p1", "train.py:16", "before", "x", x)
    _pp.probe("p1", "train.py:16", "before", "w", w)
    y = _pp.probe("p1", "train.py:16", "after", "y", x @ w)
    z = _pp.probe("p2", "train.py:19", "after", "z", torch.relu(y) * scale)
    _pp.probe("p3", "train.py:20", "after", "meta", (step, "lr", None, scale))
    _pp.probe("p5", "train.py:21", "after", "n", torch.tensor([float("nan"), 1.0]))
    if "quiet" not in flags:
        print("step: %d  loss: %8.5f  grad_norm: %8.4f" % (step, z.sum().item(), w.norm().item()), flush=True)
print("training success", flush=True)
)PY";

// Runs the script in `dir` with the helper rendered for rank 0 and every call; returns its
// stdout (a failed run fails the calling test with the evidence).
inline std::string RunProbedScript(const ScratchDir& dir, const std::string& scale,
                                   const std::vector<std::string>& flags) {
  std::string helper = ReadFile(PARITY_PROBE_HELPER);
  auto replace = [&helper](const std::string& key, const std::string& value) {
    const size_t at = helper.find(key);
    if (at != std::string::npos) helper.replace(at, key.size(), value);
  };
  replace("__PARITY_RANK__", "0");
  replace("__PARITY_CALLS__", "None");
  dir.Write("_parity_probe.py", helper);
  dir.Write("train.py", kProbedScript);
  ProcessOptions options;
  options.argv = {"/usr/bin/python3", "-u", "train.py", scale};
  options.argv.insert(options.argv.end(), flags.begin(), flags.end());
  options.cwd = dir.path();
  options.timeout = std::chrono::seconds(120);
  options.env_set = {{"OMP_NUM_THREADS", "1"}};
  options.env_unset = {"RANK", "LOCAL_RANK"};  // the helper would read them
  auto run = RunProcess(options);
  if (!run.ok()) {
    ADD_FAILURE() << run.status().ToString();
    return "";
  }
  if (!run->success()) {
    ADD_FAILURE() << ProcessFailure("the probed script", options, *run).ToString();
    return "";
  }
  return run->out;
}

}  // namespace parity::logs::testing
