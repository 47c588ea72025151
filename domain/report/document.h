// A format-neutral report document (after clangd's markup::Document): the content is
// decided once, from the model, and the HTML and PDF renderers only lay it out.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/report/chart.h"
#include "domain/report/model.h"

namespace parity::report {

struct Block {
  enum class Kind { kHeading, kParagraph, kVerdict, kKeyValues, kTable, kChart, kCode, kLinks };
  Kind kind = Kind::kParagraph;
  int level = 1;              // heading level 1..3
  std::string text;           // heading, paragraph, verdict reason, code
  std::string verdict;        // PASS | FAIL | INCONCLUSIVE (kVerdict)
  std::vector<std::pair<std::string, std::string>> pairs;  // kKeyValues; kLinks: label, href
  std::vector<std::string> header;                         // kTable
  std::vector<std::vector<std::string>> rows;              // kTable
  bool monospace = false;                                   // kTable cells, kKeyValues values
  ChartSpec chart;            // kChart
  std::string chart_id;       // file stem of the chart's PNG: "<case>_loss"
  bool in_summary = false;    // also part of the one-page PR summary (pr_summary.pdf)
};

struct Document {
  std::string title;
  std::string subtitle;
  Language language = Language::kZh;
  std::vector<Block> blocks;
};

// The report for `model`; `reproduce` is the validated reproduce.json (or null when the
// caller did not ask for one, and then the section says so).
Document BuildDocument(const ReportModel& model, const nlohmann::json& reproduce, const std::string& generated_at);

// The summary to attach to a pull request (pr_summary.pdf): the overall verdict and case
// table, both commits, each case's verdict, statistics and difference chart, the first
// divergent API when a hunt ran, and where the full report and the replay command are.
Document PrSummary(const Document& full);

// Every chart of the document, for the PNG writer and the mail.
std::vector<const Block*> Charts(const Document& doc);

// "PASS" when every case passed, "FAIL" when any failed, otherwise "INCONCLUSIVE".
std::string OverallVerdict(const ReportModel& model);

}  // namespace parity::report
