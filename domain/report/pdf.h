// The document as an A4 PDF through libharu. Chinese runs use libharu's built-in CID fonts
// (SimSun / SimHei, GBK-EUC-H, text converted with iconv): its TrueType + UTF-8 route
// garbles subset CJK glyphs (docs/DESIGN.md). Latin runs use Helvetica and Courier.
// Charts are vector paths; tables wrap their cells, break across pages and repeat their
// header; every page has a footer with the page number.
#pragma once

#include <filesystem>

#include "domain/report/document.h"
#include "support/status.h"

namespace parity::report {

Status RenderPdf(const Document& doc, const std::filesystem::path& out_path);

}  // namespace parity::report
