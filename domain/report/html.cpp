#include "domain/report/html.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "domain/report/svg.h"

namespace parity::report {

namespace {

constexpr const char* kStyle = R"css(
:root { --ink:#212121; --muted:#666; --line:#ddd; --pass:#1b7f3b; --fail:#c62828; --inc:#b26a00; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fafafa;
  font: 15px/1.55 -apple-system, "Segoe UI", Helvetica, Arial, "PingFang SC", "Noto Sans CJK SC",
        "Microsoft YaHei", sans-serif; }
main { max-width: 1000px; margin: 0 auto; padding: 24px 20px 48px; background: #fff; }
h1 { font-size: 1.7em; margin: 0 0 4px; }
h2 { font-size: 1.3em; margin: 2em 0 .6em; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 1.08em; margin: 1.4em 0 .5em; }
.subtitle { color: var(--muted); margin: 0 0 1em; }
.verdict { border-left: 8px solid; padding: 10px 14px; margin: .8em 0; background: #f6f6f6; border-radius: 4px; }
.verdict b { font-size: 1.35em; letter-spacing: .03em; }
.verdict.PASS { border-color: var(--pass); } .verdict.PASS b { color: var(--pass); }
.verdict.FAIL { border-color: var(--fail); } .verdict.FAIL b { color: var(--fail); }
.verdict.INCONCLUSIVE { border-color: var(--inc); } .verdict.INCONCLUSIVE b { color: var(--inc); }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; margin: .5em 0 1em; }
table { border-collapse: collapse; font-size: .9em; min-width: 50%; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; position: sticky; top: 0; }
td.mono, dd.mono, pre, code { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: .92em; }
td.mono { white-space: nowrap; }
dl { display: grid; grid-template-columns: minmax(8em, max-content) 1fr; gap: 3px 14px; margin: .5em 0 1em; }
dt { color: var(--muted); } dd { margin: 0; overflow-wrap: anywhere; }
pre { background: #f4f4f4; border: 1px solid var(--line); padding: 10px; overflow-x: auto; white-space: pre;
  line-height: 1.4; }
figure { margin: 1em 0; } figure svg, figure img { width: 100%; height: auto; display: block;
  border: 1px solid var(--line); }
ul.links { padding-left: 1.2em; } ul.links li { overflow-wrap: anywhere; }
@media (max-width: 600px) { body { font-size: 14px; } main { padding: 14px 10px; }
  dl { grid-template-columns: 1fr; } dt { margin-top: 6px; } }
@media print { body { background: #fff; } main { max-width: none; padding: 0; }
  figure, .verdict, dl { break-inside: avoid; } h2, h3 { break-after: avoid; }
  .scroll { overflow: visible; } th { position: static; } pre { white-space: pre-wrap; } }
@page { size: A4; margin: 14mm; }
)css";

void Table(std::ostringstream& out, const Block& b) {
  out << "<div class=\"scroll\"><table><thead><tr>";
  for (const auto& h : b.header) out << "<th>" << XmlEscape(h) << "</th>";
  out << "</tr></thead><tbody>\n";
  const char* td = b.monospace ? "<td class=\"mono\">" : "<td>";
  for (const auto& row : b.rows) {
    out << "<tr>";
    for (const auto& cell : row) out << td << XmlEscape(cell) << "</td>";
    out << "</tr>\n";
  }
  out << "</tbody></table></div>\n";
}

}  // namespace

std::string RenderHtml(const Document& doc, const HtmlOptions& options) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"" << (doc.language == Language::kZh ? "zh-CN" : "en") << "\">\n<head>\n"
      << "<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << XmlEscape(doc.title) << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body><main>\n"
      << "<h1>" << XmlEscape(doc.title) << "</h1>\n<p class=\"subtitle\">" << XmlEscape(doc.subtitle) << "</p>\n";
  for (const auto& b : doc.blocks) {
    switch (b.kind) {
      case Block::Kind::kHeading: {
        int level = std::clamp(b.level, 2, 3);  // h1 is the title
        out << "<h" << level << ">" << XmlEscape(b.text) << "</h" << level << ">\n";
        break;
      }
      case Block::Kind::kParagraph:
        out << "<p>" << XmlEscape(b.text) << "</p>\n";
        break;
      case Block::Kind::kVerdict:
        out << "<div class=\"verdict " << XmlEscape(b.verdict) << "\"><b>" << XmlEscape(b.verdict) << "</b><br>"
            << XmlEscape(b.text) << "</div>\n";
        break;
      case Block::Kind::kKeyValues:
        out << "<dl>\n";
        for (const auto& [k, v] : b.pairs) {
          out << "<dt>" << XmlEscape(k) << "</dt><dd" << (b.monospace ? " class=\"mono\"" : "") << ">" << XmlEscape(v)
              << "</dd>\n";
        }
        out << "</dl>\n";
        break;
      case Block::Kind::kTable:
        Table(out, b);
        break;
      case Block::Kind::kChart: {
        out << "<figure>";
        auto cid = options.chart_cids.find(b.chart_id);
        if (cid != options.chart_cids.end()) {
          out << "<img src=\"cid:" << XmlEscape(cid->second) << "\" alt=\"" << XmlEscape(b.chart.title) << "\">";
        } else {
          out << ChartToSvg(b.chart, 720, 340);
        }
        out << "</figure>\n";
        break;
      }
      case Block::Kind::kCode:
        out << "<pre>" << XmlEscape(b.text) << "</pre>\n";
        break;
      case Block::Kind::kLinks:
        out << "<ul class=\"links\">\n";
        for (const auto& [label, href] : b.pairs) {
          if (options.logs_attached) {
            out << "<li>" << XmlEscape(label) << " (" << XmlEscape(std::filesystem::path(href).filename().string())
                << ")</li>\n";
          } else {
            out << "<li><a href=\"" << XmlEscape(href) << "\">" << XmlEscape(label) << "</a></li>\n";
          }
        }
        out << "</ul>\n";
        break;
    }
  }
  out << "</main></body>\n</html>\n";
  return out.str();
}

}  // namespace parity::report
