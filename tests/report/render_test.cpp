// render_report end to end, on report directories from real toy-trainer runs: every format
// for a PASS, a FAIL and an INCONCLUSIVE case; the PDF checked by rendering it (poppler);
// the HTML opened in headless Chromium with its network log checked.
#include <fstream>
#include <regex>
#include <set>

#include <gtest/gtest.h>

#include "domain/report/document.h"
#include "domain/report/pdf.h"
#include "domain/report/render.h"
#include "domain/report/reproduce.h"
#include "e2e_util.h"
#include "png_reader.h"
#include "tests/logs/probe_runs.h"

namespace parity::report {
namespace {

namespace fs = std::filesystem;
using testing::CopyReportDir;
using testing::ReadJson;
using testing::RunOrFail;
using testing::Slurp;

struct Case {
  std::string fixture, verdict;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.fixture << " (" << c.verdict << ")"; }

class RenderEachVerdict : public ::testing::TestWithParam<Case> {};

TEST_P(RenderEachVerdict, WritesEveryFormatAndRecordsItInTheLedger) {
  const Case c = GetParam();
  fs::path dir = CopyReportDir(c.fixture, "formats_" + c.fixture);
  RenderOptions o;
  o.report_dir = dir;
  auto r = RenderReport(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->verdict, c.verdict);
  ASSERT_EQ(r->cases.size(), 1u);
  EXPECT_EQ(r->cases[0]["verdict"], c.verdict);

  EXPECT_TRUE(fs::is_regular_file(dir / "report" / "report.html"));
  EXPECT_TRUE(fs::is_regular_file(dir / "report" / "numerical_stability_report.pdf"));
  EXPECT_TRUE(fs::is_regular_file(dir / "report" / "toy_small_diff_summary.csv"));
  EXPECT_EQ(Slurp(dir / "report" / "toy_small_diff_summary.csv"), Slurp(dir / "toy_small" / "diff_summary.csv"));
  std::set<std::string> charts;
  for (const auto& p : r->outputs["charts"]) {
    auto img = testing::ReadPngFile(p.get<std::string>());
    EXPECT_EQ(img.width, 1440) << p;
    EXPECT_GT(img.InkFraction(), 0.01) << p << " looks blank";
    charts.insert(fs::path(p.get<std::string>()).filename().string());
  }
  std::set<std::string> expected = {"toy_small_loss.png", "toy_small_grad_norm.png", "toy_small_abs_diff.png"};
  // The demo's hunt (msprobe_first_diff on its dumps) draws the step x layer heatmap too.
  if (fs::exists(dir / "hunt" / "hunt.json")) expected.insert("hunt_heatmap.png");
  EXPECT_EQ(charts, expected);

  json reproduce = ReadJson(dir / "report" / "reproduce.json");
  Status valid = ValidateReproduce(reproduce, /*check_world=*/true);
  EXPECT_TRUE(valid.ok()) << valid.ToString();

  json manifest = ReadJson(dir / "manifest.json");
  const json& last = manifest["entries"].back();
  EXPECT_EQ(last["id"], r->ledger_id);
  EXPECT_EQ(last["tool"], "render_report");
  EXPECT_EQ(last["action"], "render");
  EXPECT_EQ(last["outputs"]["html"], "report/report.html");
  EXPECT_EQ(last["outcome"]["status"], "ok");
}

INSTANTIATE_TEST_SUITE_P(Verdicts, RenderEachVerdict,
                         ::testing::Values(Case{"refactor", "PASS"}, Case{"gelu_tanh", "FAIL"},
                                           Case{"ulp_loss_order", "INCONCLUSIVE"}),
                         [](const auto& info) { return info.param.fixture; });

class PdfOfEachVerdict : public ::testing::TestWithParam<Case> {};

TEST_P(PdfOfEachVerdict, RendersWithChineseHeadingsVerdictCommitsAndPageNumbers) {
  const Case c = GetParam();
  fs::path dir = CopyReportDir(c.fixture, "pdf_" + c.fixture);
  RenderOptions o;
  o.report_dir = dir;
  o.formats = {"pdf", "reproduce"};
  auto r = RenderReport(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string pdf = (dir / "report" / "numerical_stability_report.pdf").string();

  // Pages exist and are not blank.
  fs::path pages = dir / "pages";
  fs::create_directories(pages);
  auto ppm = RunOrFail({"pdftoppm", "-r", "40", "-png", pdf, (pages / "p").string()});
  ASSERT_TRUE(ppm.success()) << ppm.out;
  int count = 0;
  for (const auto& e : fs::directory_iterator(pages)) {
    ++count;
    auto img = testing::ReadPngFile(e.path().string());
    EXPECT_GT(img.width, 0) << e.path();
    EXPECT_GT(img.InkFraction(), 0.005) << e.path() << " is blank";
  }
  EXPECT_GE(count, 3);

  auto text = RunOrFail({"pdftotext", "-enc", "UTF-8", pdf, "-"});
  ASSERT_TRUE(text.success()) << text.out;
  for (const char* heading : {"数值精度对比报告", "结论", "环境信息", "提交与配置", "差异统计", "曲线", "复现步骤",
                              "训练日志", "附录：逐 step 差异明细"}) {
    EXPECT_NE(text.out.find(heading), std::string::npos) << "heading " << heading << " missing";
  }
  EXPECT_NE(text.out.find(c.verdict), std::string::npos);
  // Chart text is Chinese too (vector text in the PDF, drawn through the CID fonts).
  for (const char* label : {"基线 baseline", "候选 candidate", "训练步 step", "逐 step 绝对差"}) {
    EXPECT_NE(text.out.find(label), std::string::npos) << "chart label " << label << " missing";
  }
  EXPECT_EQ(text.out.find("(baseline vs candidate)"), std::string::npos) << "an English chart title in the zh report";
  if (c.fixture == "gelu_tanh") {  // the root cause msprobe_first_diff found (hunt/hunt.json)
    for (const char* s : {"根因定位", "Functional.gelu.0.forward", "approximate=\"tanh\"", "@@ -57 +57 @@", "=>",
                          "逐 step × 层：各层输出的相对差异"}) {
      EXPECT_NE(text.out.find(s), std::string::npos) << s << " missing from the root-cause section";
    }
  }
  json reproduce = ReadJson(dir / "report" / "reproduce.json");
  for (const char* side : {"baseline", "candidate"}) {
    std::string commit = reproduce[side]["commit"];
    EXPECT_NE(text.out.find(commit), std::string::npos) << side << " commit " << commit;
  }
  // Footers "n / N" (pdftotext may drop the spaces).
  for (int page : {1, count}) {
    std::regex footer(std::to_string(page) + R"(\s*/\s*)" + std::to_string(count) + R"((\s|$))");
    EXPECT_TRUE(std::regex_search(text.out, footer)) << "no footer for page " << page;
  }

  // The PR summary: verdict, commits, statistics and the difference chart; no appendix.
  const std::string summary = (dir / "report" / "pr_summary.pdf").string();
  auto summary_text = RunOrFail({"pdftotext", "-enc", "UTF-8", summary, "-"});
  ASSERT_TRUE(summary_text.success()) << summary_text.out;
  for (const std::string& s : {std::string("PR 摘要"), std::string("差异统计"), std::string("逐 step 绝对差"), c.verdict,
                              reproduce["baseline"]["commit"].get<std::string>(),
                              reproduce["candidate"]["commit"].get<std::string>(), std::string("parity reproduce")}) {
    EXPECT_NE(summary_text.out.find(s), std::string::npos) << s << " missing from pr_summary.pdf";
  }
  EXPECT_EQ(summary_text.out.find("附录"), std::string::npos) << "the per-step appendix belongs to the full report";
  auto summary_pages = RunOrFail({"pdfinfo", summary});
  EXPECT_TRUE(std::regex_search(summary_pages.out, std::regex(R"(Pages:\s+[1-3]\n)"))) << summary_pages.out;

  auto fonts = RunOrFail({"pdffonts", pdf});
  ASSERT_TRUE(fonts.success()) << fonts.out;
  for (const char* font : {"SimSun", "SimHei", "Helvetica", "Courier"}) {
    EXPECT_NE(fonts.out.find(font), std::string::npos) << fonts.out;
  }
  EXPECT_NE(fonts.out.find("GBK-EUC-H"), std::string::npos) << fonts.out;
}

INSTANTIATE_TEST_SUITE_P(Verdicts, PdfOfEachVerdict,
                         ::testing::Values(Case{"refactor", "PASS"}, Case{"gelu_tanh", "FAIL"},
                                           Case{"ulp_loss_order", "INCONCLUSIVE"}),
                         [](const auto& info) { return info.param.fixture; });

TEST(PdfLayout, LongTableBreaksAcrossPagesAndRepeatsItsHeader) {
  Document doc;
  doc.title = "表格分页 table paging";
  Block t;
  t.kind = Block::Kind::kTable;
  t.header = {"step", "baseline 基线", "candidate 候选"};
  for (int i = 1; i <= 150; ++i) t.rows.push_back({std::to_string(i), "row" + std::to_string(i), "值"});
  doc.blocks.push_back(t);
  fs::path dir = testing::ScratchDir("pdf_table");
  ASSERT_TRUE(RenderPdf(doc, dir / "t.pdf").ok());
  int pages_with_header = 0, pages = 0;
  for (int page = 1; page <= 10; ++page) {
    auto text = RunOrFail({"pdftotext", "-f", std::to_string(page), "-l", std::to_string(page), "-enc", "UTF-8",
                           (dir / "t.pdf").string(), "-"});
    if (!text.success()) break;
    ++pages;
    pages_with_header += text.out.find("baseline 基线") != std::string::npos;
  }
  EXPECT_GE(pages, 3);
  EXPECT_EQ(pages_with_header, pages);
  auto last = RunOrFail({"pdftotext", "-enc", "UTF-8", (dir / "t.pdf").string(), "-"});
  EXPECT_NE(last.out.find("row150"), std::string::npos);
}

// Every URL Chromium's network log saw, except Chromium's own service traffic (update
// checks and account probes it makes whatever the page is).
std::vector<std::string> PageRequests(const fs::path& netlog) {
  json log = ReadJson(netlog);
  std::vector<std::string> urls;
  static const std::regex kBrowserOwn(R"(^(https?://)?([a-z0-9-]+\.)*(google\.com|googleapis\.com|gstatic\.com|gvt1\.com)(:\d+)?(/|$))");
  for (const auto& e : log.value("events", json::array())) {
    const json& p = e.value("params", json::object());
    if (!p.is_object() || !p.contains("url") || !p["url"].is_string()) continue;
    std::string url = p["url"];
    if (url.rfind("file://", 0) == 0 || url.rfind("data:", 0) == 0 || std::regex_search(url, kBrowserOwn)) continue;
    urls.push_back(url);
  }
  return urls;
}

testing::Image Screenshot(const fs::path& html, const fs::path& work, const std::string& size,
                          std::vector<std::string>* requests) {
  fs::path shot = work / ("shot_" + size + ".png"), netlog = work / ("net_" + size + ".json");
  auto r = RunOrFail({"/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                      "--disable-background-networking", "--disable-component-update", "--disable-sync",
                      "--user-data-dir=" + (work / ("profile_" + size)).string(), "--window-size=" + size,
                      "--screenshot=" + shot.string(), "--log-net-log=" + netlog.string(),
                      "file://" + html.string()},
                     180);
  EXPECT_TRUE(r.success()) << r.out;
  if (requests) *requests = PageRequests(netlog);
  return testing::ReadPngFile(shot.string());
}

TEST(Html, SelfContainedAndReadableInHeadlessChromiumOnLaptopAndPhone) {
  fs::path dir = CopyReportDir("gelu_tanh", "html_chromium");
  RenderOptions o;
  o.report_dir = dir;
  o.formats = {"html", "reproduce"};
  auto r = RenderReport(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  fs::path html = dir / "report" / "report.html";
  std::string text = Slurp(html);
  // Nothing to fetch: no remote src/href, no stylesheet or script links, no CSS url().
  EXPECT_FALSE(std::regex_search(text, std::regex(R"((src|href)\s*=\s*"(https?:)?//)"))) << "remote reference";
  EXPECT_EQ(text.find("<script"), std::string::npos);
  EXPECT_EQ(text.find("<link"), std::string::npos);
  EXPECT_EQ(text.find("url("), std::string::npos);
  EXPECT_EQ(text.find("@import"), std::string::npos);
  EXPECT_NE(text.find("<svg viewBox"), std::string::npos);
  EXPECT_NE(text.find("name=\"viewport\""), std::string::npos);
  EXPECT_NE(text.find("@media print"), std::string::npos);

  fs::path work = dir / "chromium";
  fs::create_directories(work);
  std::vector<std::string> requests;
  auto laptop = Screenshot(html, work, "1280,2000", &requests);
  EXPECT_EQ(laptop.width, 1280);
  EXPECT_GT(laptop.InkFraction(), 0.03) << "laptop screenshot looks blank";
  EXPECT_GT(laptop.CountColor(198, 40, 40, 30), 50u) << "the red FAIL verdict is not visible";
  EXPECT_TRUE(requests.empty()) << "the page requested " << requests.front();
  auto phone = Screenshot(html, work, "390,844", nullptr);
  EXPECT_EQ(phone.width, 390);
  EXPECT_GT(phone.InkFraction(), 0.03) << "phone screenshot looks blank";
}

TEST(Html, NetworkLogCheckCatchesARequestLeavingThePage) {
  // The check above must be able to fail: the same page with one remote image.
  fs::path dir = testing::ScratchDir("html_canary");
  int port = testing::FreePort();
  std::string canary = "http://127.0.0.1:" + std::to_string(port) + "/canary.png";
  std::ofstream(dir / "canary.html") << "<!DOCTYPE html><html><body><p>x</p><img src=\"" << canary
                                     << "\"></body></html>";
  std::vector<std::string> requests;
  Screenshot(dir / "canary.html", dir, "400,300", &requests);
  bool seen = false;
  for (const auto& u : requests) seen = seen || u == canary;
  EXPECT_TRUE(seen) << "the network log did not show " << canary;
}

TEST(Html, EnglishReportHasEnglishHeadings) {
  fs::path dir = CopyReportDir("refactor", "html_en");
  RenderOptions o;
  o.report_dir = dir;
  o.language = Language::kEn;
  o.formats = {"html", "reproduce"};
  o.title = "Refactor parity check";
  auto r = RenderReport(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string text = Slurp(dir / "report" / "report.html");
  for (const char* s : {"<h1>Refactor parity check</h1>", "How to reproduce", "Difference statistics", "Environment",
                        "Training logs", "lang=\"en\"", "PASS"}) {
    EXPECT_NE(text.find(s), std::string::npos) << s;
  }
  EXPECT_EQ(text.find("复现步骤"), std::string::npos);
  // The environment as probe_env recorded it: one row per item, a column per side, agreement.
  EXPECT_NE(text.find("<th>item</th><th>baseline</th><th>candidate</th>"), std::string::npos);
  EXPECT_TRUE(std::regex_search(text, std::regex(R"(<td class="mono">torch</td><td class="mono">1\.13[^<]*</td>)")));
  EXPECT_NE(text.find("<td class=\"mono\">yes</td></tr>"), std::string::npos);
}

TEST(Render, ProbeEvidenceComparedByCompareLogsIsShown) {
  // Two runs of a script instrumented with inject_prints' helper (the candidate scales one
  // value), compared by the real compare_logs into a case of a report directory.
  fs::path dir = CopyReportDir("refactor", "probes");
  logs::testing::ScratchDir runs;
  fs::path base = runs.Write("baseline_probes.log", logs::testing::RunProbedScript(runs, "1.0", {}));
  fs::path cand = runs.Write("candidate_probes.log", logs::testing::RunProbedScript(runs, "1.5", {}));
  json args = {{"baseline", base.string()}, {"candidate", cand.string()}, {"case", "probes"}, {"preset", "premerge"}};
  auto compared = RunOrFail({PARITY_BINARY, "call", "compare_logs", args.dump(), "--report-dir", dir.string()});
  ASSERT_TRUE(compared.success()) << compared.out;
  ASSERT_TRUE(ReadJson(dir / "probes" / "report.json").contains("probes"));

  RenderOptions o;
  o.report_dir = dir;
  o.cases = {"probes"};
  o.formats = {"html"};
  auto r = RenderReport(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string html = Slurp(dir / "report" / "report.html");
  for (const char* s : {"探针对比", "首个不一致的探针", "p2|after|z", "compare_logs 备注"}) {
    EXPECT_NE(html.find(s), std::string::npos) << s;
  }
}

TEST(Render, ReportJsonThatBreaksTheContractIsRefusedNamingThePath) {
  fs::path dir = CopyReportDir("refactor", "bad_report_json");
  json report = ReadJson(dir / "toy_small" / "report.json");
  report.erase("verdict");
  std::ofstream(dir / "toy_small" / "report.json") << report.dump();
  RenderOptions o;
  o.report_dir = dir;
  auto r = RenderReport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("toy_small/report.json.verdict: required field is missing"), std::string::npos)
      << r.status().message();
}

TEST(Render, LedgerWithoutTheCandidateCommitIsRefusedNamingIt) {
  fs::path dir = CopyReportDir("refactor", "ledger_no_candidate");
  json manifest = ReadJson(dir / "manifest.json");
  for (auto& e : manifest["entries"]) {
    if (e.value("side", json()) == "candidate") e.erase("git");
  }
  std::ofstream(dir / "manifest.json") << manifest.dump();
  RenderOptions o;
  o.report_dir = dir;
  auto r = RenderReport(o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("side \"candidate\" records git.commit"), std::string::npos)
      << r.status().message();
  EXPECT_FALSE(fs::exists(dir / "report" / "reproduce.json"));
}

}  // namespace
}  // namespace parity::report
