// Generates the parse_log benchmark inputs: a torchtitan log of 8 ranks interleaved, with
// ANSI colours and [rankN]: prefixes (the real line format of formats.md §2.a), and a
// Megatron training_log (§4.1), each grown to a target size with the kind of chatter real
// multi-rank runs print between metric lines (warnings, GC notes, dataloader lines).
//   gen_logs torchtitan OUT [steps=100000] [bytes=1073741824]
//   gen_logs megatron OUT [bytes=1073741824]
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

struct Writer {
  FILE* f;
  uint64_t bytes = 0;
  void Line(const char* s, int n) {
    std::fwrite(s, 1, n, f);
    bytes += n;
  }
};

// Deterministic pseudo-random numbers so both runs of the bench see the same file.
uint64_t state = 0x9E3779B97F4A7C15ull;
double Uniform() {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return static_cast<double>(state >> 11) / 9007199254740992.0;
}

const char* kFiller[] = {
    "[rank%d]:[titan] 2026-05-18 16:%02d:%02d,%03d - root - INFO - [GC] Performing periodical GC collection 0.02 seconds",
    "[rank%d]:/usr/lib/python3/dist-packages/torch/distributed/fsdp/_fully_shard/_fsdp_param.py:%d: UserWarning: "
    "The passed in tensor is not contiguous; a contiguous copy is made, which may slow down training (seen %02d:%02d)",
    "[rank%d]:[titan] 2026-05-18 16:%02d:%02d,%03d - root - INFO - Dataloader: prefetching shard c4/train-%05d-of-01024 "
    "(buffer 512 samples, 8 workers, pin_memory=True)",
    "[rank%d]:[titan] 2026-05-18 16:%02d:%02d,%03d - root - WARNING - torch_npu: operator aclnnFlashAttentionScore "
    "falls back to a slower kernel for this shape (seq %d)",
};

int GenerateTorchtitan(const char* out, long steps, uint64_t target) {
  Writer w{std::fopen(out, "wb")};
  if (!w.f) return std::perror(out), 1;
  const uint64_t metric_bytes_estimate = static_cast<uint64_t>(steps) * 8 * 232;
  const double filler_per_rank_step =
      target > metric_bytes_estimate ? static_cast<double>(target - metric_bytes_estimate) / (steps * 8.0 * 165.0) : 0;
  char line[1024];
  double filler_debt = 0;
  for (long step = 1; step <= steps; ++step) {
    const double loss = 10.8 * std::exp(-step / 20000.0) + 1.5 + 0.01 * Uniform();
    const double grad_norm = 5.0 * std::exp(-step / 30000.0) + 0.3 + 0.01 * Uniform();
    for (int rank = 0; rank < 8; ++rank) {
      const int mm = static_cast<int>(step / 60 % 60), ss = static_cast<int>(step % 60);
      int n = std::snprintf(line, sizeof line,
                            "[rank%d]:[titan] 2026-05-18 16:%02d:%02d,%03d - root - INFO - \x1b[31mstep: %2ld  "
                            "\x1b[32mloss: %8.5f  \x1b[38;2;180;60;0mgrad_norm: %7.4f  \x1b[38;2;54;234;195mmemory: "
                            "%5.2fGiB(%.2f%%)  \x1b[34mtps: %d,%03d  \x1b[36mtflops: %d,%06.2f  \x1b[35mmfu: %.2f%%\x1b[39m\n",
                            rank, mm, ss, static_cast<int>(step % 1000), step, loss + rank * 1e-5, grad_norm, 9.46,
                            64.99, 7, static_cast<int>(step % 1000), 1, 234.5, 0.17);
      w.Line(line, n);
      filler_debt += filler_per_rank_step;
      while (filler_debt >= 1) {
        filler_debt -= 1;
        const int kind = static_cast<int>(Uniform() * 4);
        if (kind == 1) {
          n = std::snprintf(line, sizeof line, kFiller[1], rank, 120 + kind, mm, ss);
        } else if (kind == 2) {
          n = std::snprintf(line, sizeof line, kFiller[2], rank, mm, ss, 1, static_cast<int>(step % 1024));
        } else {
          n = std::snprintf(line, sizeof line, kFiller[kind], rank, mm, ss, 7, 4096);
        }
        line[n++] = '\n';
        w.Line(line, n);
      }
    }
  }
  const char done[] = "[rank0]:[titan] 2026-05-18 18:00:00,000 - root - INFO - Training completed\n";
  w.Line(done, sizeof done - 1);
  std::fclose(w.f);
  std::printf("%s: %ld steps x 8 ranks, %" PRIu64 " bytes\n", out, steps, w.bytes);
  return 0;
}

int GenerateMegatron(const char* out, uint64_t target) {
  Writer w{std::fopen(out, "wb")};
  if (!w.f) return std::perror(out), 1;
  char line[1024];
  long iterations = 0;
  const long total = 3000000;
  while (w.bytes < target && iterations < total) {
    ++iterations;
    const double loss = 11.0 * std::exp(-iterations / 500000.0) + 1.8 + 0.01 * Uniform();
    const double gn = 30.0 * std::exp(-iterations / 400000.0) + 0.5 + 0.01 * Uniform();
    const int n = std::snprintf(
        line, sizeof line,
        " [2026-09-11 12:%02ld:%02ld.987995] iteration %8ld/%8ld | consumed samples: %12ld | elapsed time per "
        "iteration (ms): 24379.9 | throughput per GPU (TFLOP/s/GPU): 26.8 | learning rate: %.6E | global batch "
        "size:    32 | lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | num zeros: 1299.0 | params norm: "
        "496.206 | number of skipped iterations:   0 | number of nan iterations:   0 |\n",
        iterations / 60 % 60, iterations % 60, iterations, total, iterations * 32, 1.40625e-4, loss, gn);
    w.Line(line, n);
    if (iterations % 4 == 0) {
      const int m = std::snprintf(line, sizeof line,
                                  "(min, max) time across ranks (ms):\n    forward-backward ...................: "
                                  "(24100.12, 24120.55)\n    optimizer ..........................: (210.01, 213.77)\n");
      w.Line(line, m);
    }
  }
  std::fclose(w.f);
  std::printf("%s: %ld iterations, %" PRIu64 " bytes\n", out, iterations, w.bytes);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "torchtitan") == 0) {
    const long steps = argc > 3 ? std::atol(argv[3]) : 100000;
    const uint64_t bytes = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : (1ull << 30);
    return GenerateTorchtitan(argv[2], steps, bytes);
  }
  if (argc >= 3 && std::strcmp(argv[1], "megatron") == 0) {
    const uint64_t bytes = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : (1ull << 30);
    return GenerateMegatron(argv[2], bytes);
  }
  std::fprintf(stderr, "usage: gen_logs torchtitan OUT [steps] [bytes] | gen_logs megatron OUT [bytes]\n");
  return 2;
}
