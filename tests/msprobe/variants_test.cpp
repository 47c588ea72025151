// msprobe_first_diff on dumps the real msprobe made of tinyllama and four planted changes
// (tests/fixtures/msprobe-variants: README.md says how), in statistics and md5 mode, with
// the planted changes committed in a real git repository. The expected answers were written
// by hand from the code before parity ran:
//   norm-eps          config.py's default norm_eps 1e-5 -> 1e-6 (a dataclass in another
//                     file): RMSNorm's `+ self.eps` (Tensor.__add__.0) gets an equal tensor
//                     and a differing scalar; the line model.py:18 is in no hunk, the value
//                     is traced to config.py:11 through self.eps = eps and RMSNorm(...).
//   reassociated-sum  (x + a) + b -> x + (a + b): the first add pairs with the first add,
//                     its tensor inputs differ while every earlier output is equal: the call
//                     passes other operands, at model.py:43, which is the hunk.
//   table-dtype       the channel table built in float16: Tensor.__radd__.0 gets a float16
//                     input after equal earlier outputs: operands; model.py:57 is in no hunk,
//                     the trace goes self.channel_scale -> register_buffer -> table = (hunk, :50).
//   silu-unfused      F.silu written as gate * torch.sigmoid(gate): Torch.sigmoid has no
//                     baseline counterpart, at model.py:30 in the hunk.
// And two md5 dumps of the baseline (identical code): no divergence, every CRC difference
// discounted as hashed after an in-place op.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "domain/msprobe/analyze.h"
#include "tests/common/git_cli.h"
#include "tests/msprobe/fixtures.h"

namespace parity::msprobe {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::TempDir;
using testing_support::Git;

fs::path Variants() { return fs::path(PARITY_SOURCE_DIR) / "tests/fixtures/msprobe-variants"; }

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// src/ committed as `base`, each variant of variants.json one commit on a branch of its name.
class VariantRepo : public ::testing::Test {
 protected:
  void SetUp() override {
    repo_ = dir_.path() / "tinyllama";
    fs::copy(Variants() / "src", repo_, fs::copy_options::recursive);
    Git(repo_, {"init", "-q", "-b", "main"});
    Git(repo_, {"add", "-A"});
    Git(repo_, {"commit", "-q", "-m", "baseline"});
    Git(repo_, {"tag", "base"});
    json variants = json::parse(ReadAll(Variants() / "variants.json"))["variants"];
    for (auto& [name, edits] : variants.items()) {
      Git(repo_, {"checkout", "-q", "-b", name, "base"});
      for (const json& e : edits) {
        fs::path file = repo_ / e["file"].get<std::string>();
        std::string text = ReadAll(file);
        size_t at = text.find(e["before"].get<std::string>());
        ASSERT_NE(at, std::string::npos) << name;
        text.replace(at, e["before"].get<std::string>().size(), e["after"].get<std::string>());
        std::ofstream(file, std::ios::binary) << text;
      }
      Git(repo_, {"commit", "-q", "-am", name});
    }
  }

  json Analyze(const std::string& variant, const std::string& config, const std::string& baseline_config = "") {
    Git(repo_, {"checkout", "-q", variant == "baseline" ? "main" : variant});
    AnalyzeOptions options;
    options.baseline_dump = Variants() / "dumps/baseline" / (baseline_config.empty() ? config : baseline_config);
    options.candidate_dump = Variants() / "dumps" / variant / config;
    options.locate.worktree = repo_;
    options.locate.baseline_ref = "base";
    options.locate.candidate_ref = "HEAD";
    options.output_dir = out_.path();
    auto result = AnalyzeFirstDiff(options);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : json();
  }

  TempDir dir_, out_;
  fs::path repo_;
};

struct Expected {
  std::string variant, api, cause;
  int line;                 // the user frame's line in tinyllama/model.py
  bool in_hunk;
  std::string hunk_file;    // the hunk that changed the numbers (the trace's when not in_hunk)
  int hunk_start;
};

const Expected kExpected[] = {
    {"norm-eps", "Tensor.__add__.0.forward", "argument", 18, false, "tinyllama/config.py", 11},
    {"reassociated-sum", "Tensor.__add__.2.forward", "operands", 43, true, "tinyllama/model.py", 43},
    {"table-dtype", "Tensor.__radd__.0.forward", "operands", 57, false, "tinyllama/model.py", 50},
    {"silu-unfused", "Torch.sigmoid.0.forward", "unmatched", 30, true, "tinyllama/model.py", 29},
};

TEST_F(VariantRepo, NamesTheOpTheCauseAndTheHunkOfEveryVariant) {
  for (const char* config : {"statistics_L1", "md5_L1"}) {
    for (const Expected& x : kExpected) {
      SCOPED_TRACE(x.variant + " " + config);
      json hunt = Analyze(x.variant, config);
      ASSERT_TRUE(hunt["found"].get<bool>()) << hunt["explanation"];
      const json& first = hunt["first_divergence"];
      EXPECT_EQ(first["api"], x.api);
      EXPECT_EQ(first["verdict"], x.cause) << first["explanation"];
      EXPECT_EQ(first["cause"]["kind"], x.cause);
      ASSERT_TRUE(first["source"].is_object()) << first["stack_note"];
      EXPECT_EQ(first["source"]["line"], x.line);
      EXPECT_EQ(fs::path(first["source"]["local_file"].get<std::string>()), repo_ / "tinyllama/model.py");
      EXPECT_EQ(first["source"]["in_changed_hunk"], x.in_hunk);
      const json* hunk = nullptr;
      if (x.in_hunk) {
        hunk = &first["source"]["hunk"];
        EXPECT_TRUE(first["cause"]["trace"].is_null());
      } else {
        const json& trace = first["cause"]["trace"];
        ASSERT_TRUE(trace.is_object());
        ASSERT_FALSE(trace["hunks"].empty()) << trace.dump(2);
        hunk = &trace["hunks"][0];
        EXPECT_NE(trace["sentence"].get<std::string>().find(x.hunk_file), std::string::npos) << trace["sentence"];
      }
      EXPECT_EQ((*hunk)["file"], x.hunk_file) << hunk->dump(2);
      EXPECT_EQ((*hunk)["new_start"], x.hunk_start) << hunk->dump(2);
    }
  }
}

// The scalar's two values are named, and the chain from the line to the config field.
TEST_F(VariantRepo, TheEpsilonIsTracedFromSelfEpsToTheConfigDefault) {
  json hunt = Analyze("norm-eps", "statistics_L1");
  const json& first = hunt["first_divergence"];
  const json& args = first["cause"]["evidence"]["differing_arguments"];
  ASSERT_EQ(args.size(), 1u) << first["cause"].dump(2);
  EXPECT_EQ(args[0]["name"], "Tensor.__add__.0.forward.input.1");
  EXPECT_EQ(args[0]["candidate"], "1e-06");
  EXPECT_EQ(args[0]["baseline"], "1e-05");
  EXPECT_TRUE(first["cause"]["evidence"]["differing_inputs"].empty());
  const json& trace = first["cause"]["trace"];
  std::vector<std::string> steps;
  for (const json& s : trace["chain"]) steps.push_back(s["file"].get<std::string>() + ":" + std::to_string(s["line"].get<int>()));
  ASSERT_GE(steps.size(), 3u) << trace.dump(2);
  EXPECT_EQ(steps.front(), "tinyllama/model.py:14");  // self.eps = eps
  EXPECT_EQ(steps.back(), "tinyllama/config.py:11");  // norm_eps: float = 1e-6
  const json& reasons = trace["hunks"][0]["reasons"];
  EXPECT_NE(reasons.dump().find("1e-06"), std::string::npos) << reasons.dump();
  EXPECT_NE(first["cause"]["sentence"].get<std::string>().find("1e-06 in the candidate, 1e-05 in the baseline"),
            std::string::npos)
      << first["cause"]["sentence"];
}

// Every earlier output equal and the inputs differ: the sentence says so, and does not
// send the reader to "earlier code msprobe did not dump" as if an earlier op had diverged.
TEST_F(VariantRepo, TheReassociatedSumIsAChangedOperandNotAnUpstreamDifference) {
  for (const char* config : {"statistics_L1", "md5_L1"}) {
    SCOPED_TRACE(config);
    json hunt = Analyze("reassociated-sum", config);
    const json& cause = hunt["first_divergence"]["cause"];
    EXPECT_TRUE(cause["evidence"]["upstream_identical"].get<bool>());
    EXPECT_EQ(cause["evidence"]["differing_inputs"].size(), 2u) << cause.dump(2);
    EXPECT_NE(cause["sentence"].get<std::string>().find("every output before Tensor.__add__.2.forward is equal"),
              std::string::npos)
        << cause["sentence"];
  }
}

TEST_F(VariantRepo, TwoMd5DumpsOfTheSameCodeHaveNoDivergence) {
  json hunt = Analyze("baseline", "md5_L1_rerun", "md5_L1");
  EXPECT_FALSE(hunt["found"].get<bool>()) << hunt["first_divergence"].dump(2);
  const int64_t differing = hunt["counts"]["rows"].get<int64_t>() - hunt["counts"]["identical_rows"].get<int64_t>();
  ASSERT_GT(differing, 10) << "the fixture should carry msprobe's CRC noise";
  EXPECT_EQ(hunt["noise_total"], differing);
  ASSERT_EQ(hunt["noise"].size(), static_cast<size_t>(differing));
  bool truediv = false, mul_output = false;
  for (const json& n : hunt["noise"]) {
    EXPECT_EQ(n["kind"], "crc_after_inplace") << n.dump(2);
    const std::string row = n["row"]["name"];
    truediv |= row.find("Tensor.__truediv__.") == 0 && row.find(".output.") != std::string::npos;
    mul_output |= row.find("Tensor.mul_.") == 0 && row.find(".output.") != std::string::npos;
  }
  // The forms the issue names: AdamW's denominator and an in-place op's own output.
  EXPECT_TRUE(truediv) << hunt["noise"].dump(1);
  EXPECT_TRUE(mul_output) << hunt["noise"].dump(1);
  // msprobe's own rules flag these rows (its table says error), parity does not count them.
  EXPECT_TRUE(hunt["msprobe_first_flagged"].is_string());
}

}  // namespace
}  // namespace parity::msprobe

namespace parity::msprobe {
namespace {

// SiLU written as gate * sigmoid(gate): by name and counter, msprobe compares the
// candidate's new Tensor.__mul__.5 (gate * sigmoid) with the baseline's Tensor.__mul__.5
// (silu * w3) and shifts every later __mul__. Aligned by what each call is, the edit is
// Functional.silu.0 replaced by Torch.sigmoid.0 and Tensor.__mul__.5; the walk uses the
// aligned pairs, and says msprobe's pairing compared different ops.
TEST_F(VariantRepo, AChangedCallSequenceIsAlignedBeforeTheComparison) {
  for (const char* config : {"statistics_L1", "md5_L1"}) {
    SCOPED_TRACE(config);
    json hunt = Analyze("silu-unfused", config);
    const json& alignment = hunt["alignment"];
    ASSERT_TRUE(alignment.is_object());
    EXPECT_TRUE(alignment["complete"].get<bool>());
    EXPECT_TRUE(alignment["used_for_first_diff"].get<bool>());
    EXPECT_GT(alignment["mispaired_by_msprobe"].get<int>(), 0);
    ASSERT_FALSE(alignment["mispaired_examples"].empty());
    EXPECT_EQ(alignment["mispaired_examples"][0]["candidate"], "Tensor.__mul__.5.forward");
    EXPECT_EQ(alignment["mispaired_examples"][0]["msprobe_pairs_with"], "Tensor.__mul__.5.forward");
    EXPECT_EQ(alignment["mispaired_examples"][0]["aligned_with"], nullptr);
    const json& first = hunt["first_divergence"];
    ASSERT_TRUE(first["alignment"].is_object()) << first.dump(2);
    EXPECT_EQ(first["alignment"]["kind"], "substituted");
    EXPECT_EQ(first["alignment"]["candidate"], json({"Torch.sigmoid.0.forward", "Tensor.__mul__.5.forward"}));
    EXPECT_EQ(first["alignment"]["baseline"], json({"Functional.silu.0.forward"}));
    EXPECT_NE(first["explanation"].get<std::string>().find("where the baseline calls Functional.silu.0.forward"),
              std::string::npos) << first["explanation"];
    // The candidate's silu * w3 product is __mul__.6; it is paired with the baseline's __mul__.5.
    bool shifted = false;
    for (const json& ex : alignment["mispaired_examples"]) {
      shifted |= ex["candidate"] == "Tensor.__mul__.6.forward" && ex["msprobe_pairs_with"] == "Tensor.__mul__.6.forward" &&
                 ex["aligned_with"] == "Tensor.__mul__.5.forward";
    }
    EXPECT_TRUE(shifted) << alignment.dump(2);
  }
  // An unchanged sequence: nothing to align.
  json same = Analyze("reassociated-sum", "statistics_L1");
  EXPECT_EQ(same["alignment"]["edit_count"], 0);
  EXPECT_EQ(same["alignment"]["mispaired_by_msprobe"], 0);
  EXPECT_FALSE(same["alignment"]["used_for_first_diff"].get<bool>());
}

}  // namespace
}  // namespace parity::msprobe
