#include "tools/parse_log/series_resource.h"

#include <charconv>
#include <filesystem>

#include "domain/logs/series_file.h"

namespace parity::tools {

namespace {
constexpr std::string_view kSuffix = ".series.csv";
}  // namespace

std::string SeriesUri(const std::string& file, int64_t page) {
  return "parity://report/parse_log/" + file + "/" + std::to_string(page);
}

mcp::ResourceTemplate MakeSeriesResourceTemplate() {
  mcp::ResourceTemplate t;
  t.uri_template = "parity://report/parse_log/{file}/{page}";
  t.name = "parse_log_series";
  t.title = "parse_log series (CSV pages)";
  t.description =
      "The full per-step series parse_log wrote for a long log (its result names series_uri): rank,metric,step,"
      "value,decimals, " + std::to_string(logs::kSeriesRowsPerPage) + " rows a page, page numbers from 0.";
  t.mime_type = "text/csv";
  t.read = [](const std::string& uri, const std::map<std::string, std::string>& vars,
              mcp::ToolContext& ctx) -> Result<nlohmann::json> {
    const std::string file = vars.count("file") ? vars.at("file") : "";
    const std::string page_text = vars.count("page") ? vars.at("page") : "";
    const bool named = file.size() > kSuffix.size() && file.compare(file.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0 &&
                       file.find("..") == std::string::npos && file.find('/') == std::string::npos;
    if (!named) return NotFound("not a parse_log series file: " + file);
    int64_t page = -1;
    const auto [end, ec] = std::from_chars(page_text.data(), page_text.data() + page_text.size(), page);
    if (ec != std::errc() || end != page_text.data() + page_text.size() || page < 0)
      return InvalidArgument("page must be a number from 0: " + page_text);
    PARITY_ASSIGN_OR_RETURN(std::string text, logs::ReadSeriesPage(ctx.report_dir() / "parse_log" / file, page));
    return nlohmann::json::array({{{"uri", uri}, {"mimeType", "text/csv"}, {"text", std::move(text)}}});
  };
  return t;
}

}  // namespace parity::tools
