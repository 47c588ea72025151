// The scanner on log lines in the real formats (formats.md §2.a, §4.1, §4.4).
#include "domain/run/log_scan.h"

#include <gtest/gtest.h>

namespace parity::run {
namespace {

std::vector<std::string> Kinds(const LogScanner& s) {
  std::vector<std::string> k;
  for (const auto& f : s.findings()) k.push_back(f.kind);
  return k;
}

TEST(LogScan, TorchtitanColouredStepLinesFedInPieces) {
  std::string log =
      "[rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - \x1b[31mstep:  1  \x1b[32mloss:  3.24405  "
      "\x1b[38;2;180;60;0mgrad_norm:  0.8319  \x1b[38;2;54;234;195mmemory:  9.46GiB(64.99%)  \x1b[34mtps: 7,282  "
      "\x1b[36mtflops: 0.52  \x1b[35mmfu: 0.17%\x1b[39m\n"
      "[rank0]:[titan] 2026-05-18 16:04:47,338 - root - INFO - step: 14  loss:  3.10000  grad_norm:  0.7000  memory:  9.46GiB(64.99%)\n"
      "[rank0]:[titan] 2026-05-18 16:04:48,000 - root - INFO - validate step: 15  loss:  9.0000  memory:  9.46GiB(64.99%)\n";
  LogScanner s;
  for (size_t i = 0; i < log.size(); i += 7) s.Feed(std::string_view(log).substr(i, 7));
  s.Flush();
  EXPECT_EQ(s.last_step(), 14);
  EXPECT_EQ(s.last_loss(), "3.10000");
  EXPECT_EQ(s.last_grad_norm(), "0.7000");
  EXPECT_EQ(s.step_lines(), 2);
  EXPECT_TRUE(s.findings().empty());
  EXPECT_TRUE(s.nan_inf().empty());
}

TEST(LogScan, MegatronIterationLine) {
  LogScanner s;
  s.Feed("[default0]: [2026-09-11 12:06:52.987995] iteration        3/ 7629408 | consumed samples:           96 | "
         "elapsed time per iteration (ms): 24379.9 | learning rate: 1.406250E-04 | global batch size:    32 | "
         "lm loss: 1.107468E+01 | loss scale: 1.0 | grad norm: 30.066 | number of skipped iterations:   0 | "
         "number of nan iterations:   0 |\n");
  EXPECT_EQ(s.last_step(), 3);
  EXPECT_EQ(s.total_steps(), 7629408);
  EXPECT_EQ(s.last_loss(), "1.107468E+01");
  EXPECT_EQ(s.last_grad_norm(), "30.066");
}

TEST(LogScan, NanAndInfAreReportedPerMetric) {
  LogScanner s;
  s.Feed("step:  1  loss:  2.5  grad_norm:  1.0\nstep:  2  loss:      nan  grad_norm:      inf\n");
  ASSERT_EQ(s.nan_inf().size(), 2u);
  EXPECT_EQ(s.nan_inf()[0]["metric"], "loss");
  EXPECT_EQ(s.nan_inf()[1]["metric"], "grad_norm");
  EXPECT_EQ(s.nan_inf()[1]["step"], 2);
}

TEST(LogScan, SkillErrorStringsAreFound) {
  LogScanner s;
  s.Feed(
      "Traceback (most recent call last):\n"
      "AssertionError: metadata is None\n"
      "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (NPU 0; 60.00 GiB total capacity)\n"
      "[ERROR] 2025-04-29-18:46:11 (PID:1066924, Device:1, RankID:-1) ERR00100 PTA call acl api failed\n"
      "EZ9999: Inner Error!\n"
      "[Rank 3] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=5) ran for 1800000 milliseconds before timing out.\n"
      "Killed\n"
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n"
      "ValueError: checkpoint.initial_load_path is specified but the path is not valid: None\n"
      "checkpoint.initial_load_path='None'\n"
      "[rank0]:[titan] 2026-05-18 16:04:46,338 - root - ERROR - something broke\n");
  s.Flush();
  EXPECT_EQ(Kinds(s), (std::vector<std::string>{"traceback", "dcp_metadata_missing", "npu_oom", "acl_error",
                                                "cann_inner_error", "hccl_timeout", "killed", "cuda_oom", "none_string",
                                                "none_string", "error_line"}));
  EXPECT_EQ(s.findings()[1].line, 2);
  EXPECT_FALSE(s.findings()[1].hint.empty());
}

TEST(LogScan, OrdinaryInfoLinesAreNotFindings) {
  LogScanner s;
  s.Feed("[rank0]:[titan] INFO - Training starts at step 1\n[rank0]:[titan] INFO - training success\n"
         "No checkpoint found in ./outputs/checkpoint and no checkpoint.initial_load_path; training from scratch.\n");
  s.Flush();
  EXPECT_TRUE(s.findings().empty()) << s.ToJson().dump();
}

}  // namespace
}  // namespace parity::run
