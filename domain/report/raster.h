// Charts as PNG: an anti-aliased rasteriser of our own (coverage from the distance to each
// segment, so lines get round joins and caps), glyphs from FreeType (a Latin font, and a
// Chinese one for what it lacks), encoding by libpng.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "domain/report/chart.h"
#include "support/status.h"

namespace parity::report {

// The Latin sans-serif font used for chart text (DejaVu Sans, Liberation Sans...), or an
// error naming the paths searched and the Debian package to install.
Result<std::filesystem::path> FindChartFont();

// The font for chart text with Chinese characters (Noto Sans CJK, WenQuanYi...), used for
// the glyphs the Latin font lacks; an error naming the paths and package when none is there.
Result<std::filesystem::path> FindChartCjkFont();

// Renders `spec` into a width x height point box at `scale` pixels per point and returns
// the PNG file's bytes.
Result<std::string> ChartToPng(const ChartSpec& spec, double width, double height, double scale);

}  // namespace parity::report
