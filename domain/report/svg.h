// Charts as inline SVG for the HTML report: no external fonts or references.
#pragma once

#include <string>

#include "domain/report/chart.h"

namespace parity::report {

// An <svg> element with a viewBox, so it scales to the width of its container.
std::string ChartToSvg(const ChartSpec& spec, double width, double height);

// Escapes &, <, >, " and ' for HTML and XML text and attributes.
std::string XmlEscape(const std::string& text);

// Average advance of Helvetica-like glyphs, used where no font metrics are available.
double ApproxTextWidth(const std::string& text, double size);

}  // namespace parity::report
