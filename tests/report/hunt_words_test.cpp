// The root-cause section in Chinese: its sentences are rebuilt from hunt.json's evidence
// (msprobe_first_diff's cause, the value trace, the noise, the hunt's outcome and
// iterations), so the zh report reads in Chinese; numbers in their shortest exact form.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "domain/report/hunt_section.h"
#include "domain/report/hunt_words.h"

namespace parity::report {
namespace {

using json = nlohmann::json;

// The shape msprobe_first_diff and parity hunt write (docs/CONTRACTS.md §4), for the
// norm-eps variant: the scalar argument differs, traced to config.py.
json NormEpsHunt() {
  return json::parse(R"({
    "schema": "parity.hunt/1", "found": true, "mode": "summary", "criteria": {"mode": "bitwise"},
    "explanation": "Tensor.__add__.0.forward's tensor inputs are equal on both sides ...",
    "first_divergence": {
      "api": "Tensor.__add__.0.forward", "verdict": "argument", "inputs_equal": true, "arguments_equal": false,
      "explanation": "Tensor.__add__.0.forward's tensor inputs are equal on both sides ...",
      "msprobe_note": null,
      "cause": {"kind": "argument", "rule": "tensor inputs equal, a non-tensor argument differs",
                "sentence": "Tensor.__add__.0.forward's tensor inputs are equal on both sides",
                "evidence": {"equal_means": "the four statistics are equal", "differing_inputs": [],
                             "differing_arguments": [{"name": "Tensor.__add__.0.forward.input.1", "candidate": "1e-06",
                                                      "baseline": "1e-05"}],
                             "differing_outputs": [], "msprobe_passes": []},
                "trace": {"sentence": "the differing value is set in tinyllama/config.py @@ -11 +11 @@",
                          "hunks": [{"file": "tinyllama/config.py", "header": "@@ -11 +11 @@", "new_start": 11,
                                     "lines": ["-    norm_eps: float = 1e-5", "+    norm_eps: float = 1e-6"]}],
                          "chain": [{"file": "tinyllama/model.py", "line": 14}, {"file": "tinyllama/config.py", "line": 11}]}},
      "source": {"local_file": "/w/tinyllama/model.py", "line": 18, "function": "forward", "line_text": "return x * ...",
                 "in_changed_hunk": false, "hunk": null, "notes": []}},
    "noise": [{"api": "Tensor.mul_.3.forward", "kind": "crc_after_inplace", "hashed_late_on": "candidate",
               "later_row": "Tensor.add_.2.forward.output.0", "row": {"name": "Tensor.mul_.3.forward.input.0"},
               "explanation": "the candidate's CRC ..."}],
    "noise_total": 1,
    "hunt": {"verdict": "argument differs",
             "explanation": "tinyllama/model.py:18 (Tensor.__add__.0.forward): every input probed before ...",
             "located": {"api": "Tensor.__add__.0.forward", "file": "tinyllama/model.py", "line": 18, "in_changed_hunk": false,
                         "hunk": {"file": "tinyllama/config.py", "header": "@@ -11 +11 @@"}, "hunk_found_by": "value trace",
                         "cause": {"kind": "argument"},
                         "trace": {"hunks": [{"file": "tinyllama/config.py", "header": "@@ -11 +11 @@"}],
                                   "chain": [{"file": "tinyllama/model.py", "line": 14}]},
                         "probe": {"name": "self.eps", "when": "before", "baseline": {"value": "1e-05"},
                                   "candidate": {"value": "1e-06"}}},
             "compare": {"verdict": "FAIL"},
             "iterations": [{"iteration": 1, "phase": "statement",
                             "targets": {"candidate": [{"file": "tinyllama/model.py", "line": 18}]},
                             "probes": {"matched": 4, "divergent_count": 2,
                                        "first_divergent": {"site": "tinyllama/model.py:18", "when": "before", "name": "self.eps"}},
                             "perturbation": {"baseline": {"verdict": "PASS"}, "candidate": {"verdict": "PASS"}}}]}
  })");
}

std::string AllText(const Document& doc) {
  std::string out;
  for (const Block& b : doc.blocks) {
    out += b.text + "\n";
    for (const auto& [k, v] : b.pairs) out += k + " " + v + "\n";
    for (const auto& h : b.header) out += h + " | ";
    for (const auto& row : b.rows) {
      for (const auto& c : row) out += c + " | ";
      out += "\n";
    }
  }
  return out;
}

TEST(HuntWords, TheChineseReportSaysTheCauseTheTraceAndTheVerdictInChinese) {
  Document doc;
  AddHuntSection(NormEpsHunt(), Language::kZh, doc);
  const std::string text = AllText(doc);
  for (const char* s : {"Tensor.__add__.0.forward 的张量输入两侧一致（以 dump 的统计量为准），但其非张量参数不同："
                        "Tensor.__add__.0.forward.input.1 候选为 1e-06，基线为 1e-05",
                        "该取值在 tinyllama/config.py @@ -11 +11 @@ 中被设置；追踪链：tinyllama/model.py:14 → tinyllama/config.py:11",
                        "参数（argument）", "结论 参数不同", "探针迭代", "轮次 | 阶段 |", "语句", "PASS/PASS",
                        "候选一侧记录的 CRC 等于其后原位操作 Tensor.add_.2.forward.output.0"}) {
    EXPECT_NE(text.find(s), std::string::npos) << s << "\n---\n" << text;
  }
  // The English sentences are not what the Chinese report says.
  EXPECT_EQ(text.find("tensor inputs are equal"), std::string::npos) << text;
  EXPECT_EQ(text.find("every input probed before"), std::string::npos) << text;
}

TEST(HuntWords, TheEnglishReportKeepsTheSentencesAsWritten) {
  Document doc;
  AddHuntSection(NormEpsHunt(), Language::kEn, doc);
  const std::string text = AllText(doc);
  EXPECT_NE(text.find("Tensor.__add__.0.forward's tensor inputs are equal on both sides"), std::string::npos) << text;
  EXPECT_NE(text.find("every input probed before"), std::string::npos) << text;
  EXPECT_NE(text.find("Probe iterations"), std::string::npos) << text;
}

// Logs within the tolerance, in Chinese, with the difference of two 5-decimal prints in its
// exact form (0.00021, not the double 0.00021000000000004349).
TEST(HuntWords, NoDivergenceWithinToleranceSaysByHowMuchWithExactNumbers) {
  json hunt = {{"verdict", "no divergence"},
               {"compare", {{"metrics", {{"loss", {{"steps_compared", 2}, {"bitwise_equal", false},
                                                   {"identical_as_printed", false}, {"max_abs", 0.00021000000000004349},
                                                   {"max_abs_step", 2}, {"tolerance", {{"abs", 0.001}}},
                                                   {"printed_decimals", {{"baseline", 5}, {"candidate", 5}}},
                                                   {"resolution", 1e-05}}}}}}}};
  EXPECT_EQ(HuntSentence(hunt, true),
            "loss 在第 2 步相差 0.00021，在容差 0.001 之内（打印 5 位小数，小于 1e-05 的差异在打印值中无法显示）。");
  EXPECT_EQ(ShortNumber(json(1e-06)), "1e-06");
  EXPECT_EQ(ShortNumber(json(0.001)), "0.001");
}

}  // namespace
}  // namespace parity::report
