#include "domain/report/svg.h"

#include <cstdio>
#include <sstream>

namespace parity::report {

std::string XmlEscape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

double ApproxTextWidth(const std::string& text, double size) {
  double w = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) == 0x80) continue;  // UTF-8 continuation byte
    w += c >= 0x80 ? 1.0 : (c == ' ' || c == '.' || c == ',' || c == '-') ? 0.3 : 0.56;
  }
  return w * size;
}

namespace {

std::string Color(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

class SvgCanvas : public Canvas {
 public:
  std::ostringstream out;

  void Polyline(const std::vector<Point>& points, const Stroke& s) override {
    out << "<polyline fill=\"none\" stroke=\"" << Color(s.color) << "\" stroke-width=\"" << Num(s.width)
        << "\" stroke-linejoin=\"round\"";
    if (s.dash == Dash::kDashed) out << " stroke-dasharray=\"7 4\"";
    if (s.dash == Dash::kDotted) out << " stroke-dasharray=\"1.5 3\" stroke-linecap=\"round\"";
    out << " points=\"";
    for (const auto& p : points) out << Num(p.x) << ',' << Num(p.y) << ' ';
    out << "\"/>\n";
  }
  void FillRect(double x, double y, double w, double h, Rgb c) override {
    out << "<rect x=\"" << Num(x) << "\" y=\"" << Num(y) << "\" width=\"" << Num(w) << "\" height=\""
        << Num(h) << "\" fill=\"" << Color(c) << "\"/>\n";
  }
  void Text(double x, double y, const std::string& text, double size, Anchor a, Rgb c) override {
    const char* anchor = a == Anchor::kStart ? "start" : a == Anchor::kMiddle ? "middle" : "end";
    out << "<text x=\"" << Num(x) << "\" y=\"" << Num(y) << "\" font-size=\"" << Num(size)
        << "\" text-anchor=\"" << anchor << "\" fill=\"" << Color(c) << "\">" << XmlEscape(text)
        << "</text>\n";
  }
  void VerticalText(double x, double y, const std::string& text, double size, Rgb c) override {
    out << "<text transform=\"translate(" << Num(x) << ',' << Num(y) << ") rotate(-90)\" font-size=\""
        << Num(size) << "\" text-anchor=\"middle\" fill=\"" << Color(c) << "\">" << XmlEscape(text)
        << "</text>\n";
  }
  double TextWidth(const std::string& text, double size) override { return ApproxTextWidth(text, size); }
};

}  // namespace

std::string ChartToSvg(const ChartSpec& spec, double width, double height) {
  SvgCanvas canvas;
  DrawChart(spec, width, height, canvas);
  std::ostringstream svg;
  svg << "<svg viewBox=\"0 0 " << Num(width) << ' ' << Num(height)
      << "\" role=\"img\" aria-label=\"" << XmlEscape(spec.title)
      << "\" font-family=\"Helvetica, Arial, 'Noto Sans CJK SC', 'Microsoft YaHei', 'PingFang SC', sans-serif\" class=\"chart\">\n"
      << canvas.out.str() << "</svg>";
  return svg.str();
}

}  // namespace parity::report
