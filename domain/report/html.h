// The document as one self-contained HTML file: styles inline, charts as inline SVG (or,
// for mail, <img src="cid:..."> parts), no script and nothing fetched from anywhere.
// Readable on a laptop and a phone (fluid width, tables scroll sideways), printable.
#pragma once

#include <map>
#include <string>

#include "domain/report/document.h"

namespace parity::report {

struct HtmlOptions {
  // chart_id -> Content-ID; when set, charts are <img src="cid:..."> instead of SVG.
  std::map<std::string, std::string> chart_cids;
  // Mail: the logs travel as attachments, so links become their file names.
  bool logs_attached = false;
};

std::string RenderHtml(const Document& doc, const HtmlOptions& options = {});

}  // namespace parity::report
