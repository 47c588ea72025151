#include "tools/parse_log/parse_log.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <functional>

#include "domain/logs/log_parser.h"
#include "domain/logs/result_json.h"
#include "domain/logs/series_file.h"
#include "support/json_reader.h"
#include "tools/authorize.h"
#include "tools/parse_log/log_params.h"
#include "tools/parse_log/parse_log_schema.h"
#include "tools/parse_log/series_resource.h"

namespace parity::tools {

using json = nlohmann::json;

namespace {

struct Params {
  std::vector<std::string> paths;
  logs::ParseOptions options;
  bool series = true;
};

Result<Params> Decode(const json& arguments) {
  PARITY_RETURN_IF_ERROR(ExpectObject(arguments, "arguments"));
  Params p;
  JsonReader r(arguments, "arguments");
  int max_errors = 200;
  r.Required("paths", p.paths).Optional("series", p.series).Optional("sha256", p.options.sha256);
  r.Optional("max_errors", max_errors);
  DecodeParseOptions(r, p.options);
  if (r.ok() && p.paths.empty()) r.Fail(r.Child("paths"), "must name at least one file");
  for (size_t i = 0; r.ok() && i < p.paths.size(); ++i) {
    if (p.paths[i].empty()) r.Fail(r.Child("paths") + "[" + std::to_string(i) + "]", "must not be empty");
  }
  if (r.ok() && (max_errors < 0 || max_errors > 100000)) r.Fail(r.Child("max_errors"), "must be 0..100000");
  PARITY_RETURN_IF_ERROR(r.Finish());
  p.options.max_errors = static_cast<size_t>(max_errors);
  return p;
}

// A series longer than this is not returned inline (an assistant's client cuts or refuses
// results of a few hundred KB): parse_log writes it to the report directory instead.
constexpr size_t kInlinePoints = 1000;

size_t LongestSeries(const logs::ParseResult& r) {
  size_t n = 0;
  for (const auto& m : r.metrics) n = std::max(n, m.series.size());
  for (const auto& rank : r.other_ranks) {
    for (const auto& m : rank.metrics) n = std::max(n, m.series.size());
  }
  return n;
}

// Writes every series of `r` to <report_dir>/parse_log/<name>-<hash>.series.csv, names it
// in `file` and adds a resource link (parity://report/parse_log/<file>/<page>) per page.
Status WriteSeries(const logs::ParseResult& r, mcp::ToolContext& ctx, json& file, json& links) {
  std::filesystem::path report_dir = ctx.report_dir();
  if (report_dir.empty()) report_dir = std::filesystem::current_path() / "numerical_report";
  char hash[17];
  std::snprintf(hash, sizeof hash, "%08zx", std::hash<std::string>{}(r.path) & 0xffffffffu);
  std::string stem = std::filesystem::path(r.path).filename().string();
  for (char& c : stem) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  }
  const std::string name = stem + "-" + hash + ".series.csv";
  PARITY_RETURN_IF_ERROR(AuthorizePath(ctx, std::filesystem::absolute(report_dir), policy::Access::kWrite,
                                       "the report directory (parse_log's series files)")
                             .status());
  const std::filesystem::path path = std::filesystem::absolute(report_dir) / "parse_log" / name;
  PARITY_ASSIGN_OR_RETURN(int64_t rows, logs::WriteSeriesFile(path, r));
  const int64_t pages = std::max<int64_t>(1, (rows + logs::kSeriesRowsPerPage - 1) / logs::kSeriesRowsPerPage);
  file["series_file"] = path.string();
  file["series_rows"] = rows;
  file["series_pages"] = pages;
  file["series_uri"] = SeriesUri(name, 0);
  for (int64_t page = 0; page < pages && page < 20; ++page) {
    links.push_back({{"type", "resource_link"},
                     {"uri", SeriesUri(name, page)},
                     {"name", name + " page " + std::to_string(page + 1) + "/" + std::to_string(pages)},
                     {"mimeType", "text/csv"},
                     {"description", "rank,metric,step,value,decimals: " + std::to_string(logs::kSeriesRowsPerPage) +
                                         " rows a page of " + std::to_string(rows)}});
  }
  return Status::Ok();
}

mcp::ToolResult Handle(const json& arguments, mcp::ToolContext& ctx) {
  auto params = Decode(arguments);
  if (!params.ok()) return mcp::ToolResult::Error(params.status());
  Params& p = *params;
  auto paths = logs::ExpandLogPaths(p.paths);
  if (!paths.ok()) return mcp::ToolResult::Error(paths.status());
  for (size_t i = 0; i < paths->size(); ++i) {  // only inside the user's folders (symlinks followed)
    auto allowed = AuthorizePath(ctx, (*paths)[i], policy::Access::kRead, "arguments.paths (" + (*paths)[i].string() + ")");
    if (!allowed.ok()) return mcp::ToolResult::Error(allowed.status());
  }
  p.options.cancel = ctx.cancellation();
  json files = json::array();
  json links = json::array();
  std::string summary;
  const size_t count = paths->size();
  for (size_t i = 0; i < count; ++i) {
    const auto& path = (*paths)[i];
    p.options.progress = [&ctx, i, count, &path](uint64_t done, uint64_t total) {
      const double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
      ctx.Progress(static_cast<double>(i) + fraction, static_cast<double>(count), "reading " + path.string());
    };
    auto result = logs::ParseLog(path, p.options);
    if (!result.ok()) return mcp::ToolResult::Error(std::move(result).take_status().Context("parse_log"));
    summary += (summary.empty() ? "" : "\n") + DescribeParse(*result);
    json file = logs::ParseResultToJson(*result, p.series, kInlinePoints);
    if (p.series && LongestSeries(*result) > kInlinePoints) {
      auto written = WriteSeries(*result, ctx, file, links);
      if (!written.ok()) return mcp::ToolResult::Error(std::move(written).Context("parse_log"));
      summary += "\n  full series: " + file["series_file"].get<std::string>();
    }
    files.push_back(std::move(file));
  }
  mcp::ToolResult out = mcp::ToolResult::Structured({{"files", std::move(files)}}, summary);
  for (auto& link : links) out.content.push_back(std::move(link));
  return out;
}

}  // namespace

mcp::Tool MakeParseLogTool() {
  mcp::Tool tool;
  tool.spec.name = "parse_log";
  tool.spec.title = "Parse training logs";
  tool.spec.description =
      "Reads a training log once, streaming, at disk speed: loss, grad_norm (and lr, tps, tflops, mfu, memory, "
      "...) per step from torchtitan / torchtitan-npu (ANSI colours, [rankN]: prefixes), Megatron-LM / "
      "MindSpeed-LLM / PanGu training_log lines, DeepSpeed progress lines, HF Trainer dicts, custom keywords or "
      "a regex, and TensorBoard event files (full precision, CRC-checked). For each metric it reports how many "
      "decimals the log printed (which bounds any comparison), NaN/Inf counts; for the run: steps seen, missing, "
      "duplicated, restarts, the success marker, and every error line (Traceback, ERROR, NPU/CUDA out of "
      "memory, ERR00100, E?9999, HCCL timeouts, Killed, signals) with its line number. Warnings are part of "
      "the result. Read-only.";
  tool.spec.input_schema = ParseLogInputSchema();
  tool.spec.output_schema = ParseLogOutputSchema();
  tool.spec.annotations.read_only = true;
  tool.spec.annotations.idempotent = true;
  tool.spec.annotations.open_world = false;
  tool.handler = Handle;
  return tool;
}

}  // namespace parity::tools
