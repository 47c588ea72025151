#include "domain/report/pdf.h"
#include "support/safe_file.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <system_error>

#include <hpdf.h>

#include "domain/report/pdf_text.h"

namespace parity::report {

namespace {

constexpr double kPageW = 595.28, kPageH = 841.89;  // A4
constexpr double kMarginX = 48, kMarginTop = 50, kMarginBottom = 56;
constexpr double kContentW = kPageW - 2 * kMarginX;

struct ErrorSink {
  HPDF_STATUS first = HPDF_OK;
  HPDF_STATUS detail = 0;
};

void OnHpdfError(HPDF_STATUS error, HPDF_STATUS detail, void* user) {
  auto* sink = static_cast<ErrorSink*>(user);
  if (sink->first == HPDF_OK) sink->first = error, sink->detail = detail;
}

void SetFill(HPDF_Page page, Rgb c) { HPDF_Page_SetRGBFill(page, c.r / 255.f, c.g / 255.f, c.b / 255.f); }
void SetStroke(HPDF_Page page, Rgb c) { HPDF_Page_SetRGBStroke(page, c.r / 255.f, c.g / 255.f, c.b / 255.f); }

// Draws charts onto a page region, scaling chart points to page points. Text goes through
// PdfText, so Chinese labels use the CID font and Latin runs Helvetica.
class PdfCanvas : public Canvas {
 public:
  PdfCanvas(HPDF_Page page, PdfText& text, double left, double top, double scale)
      : page_(page), text_(text), left_(left), top_(top), s_(scale) {}

  void Polyline(const std::vector<Point>& pts, const Stroke& st) override {
    if (pts.empty()) return;
    SetStroke(page_, st.color);
    HPDF_Page_SetLineWidth(page_, static_cast<HPDF_REAL>(st.width * s_));
    HPDF_Page_SetLineJoin(page_, HPDF_ROUND_JOIN);
    if (st.dash == Dash::kDashed) {
      HPDF_UINT16 pattern[] = {5, 3};
      HPDF_Page_SetLineCap(page_, HPDF_BUTT_END);
      HPDF_Page_SetDash(page_, pattern, 2, 0);
    } else if (st.dash == Dash::kDotted) {
      HPDF_UINT16 pattern[] = {1, 3};
      HPDF_Page_SetLineCap(page_, HPDF_ROUND_END);
      HPDF_Page_SetDash(page_, pattern, 2, 0);
    } else {
      HPDF_Page_SetLineCap(page_, HPDF_BUTT_END);
      HPDF_Page_SetDash(page_, nullptr, 0, 0);
    }
    HPDF_Page_MoveTo(page_, X(pts[0].x), Y(pts[0].y));
    for (size_t i = 1; i < pts.size(); ++i) HPDF_Page_LineTo(page_, X(pts[i].x), Y(pts[i].y));
    HPDF_Page_Stroke(page_);
    HPDF_Page_SetDash(page_, nullptr, 0, 0);
  }
  void FillRect(double x, double y, double w, double h, Rgb c) override {
    SetFill(page_, c);
    HPDF_Page_Rectangle(page_, X(x), Y(y + h), static_cast<HPDF_REAL>(w * s_), static_cast<HPDF_REAL>(h * s_));
    HPDF_Page_Fill(page_);
  }
  void Text(double x, double y, const std::string& text, double size, Anchor a, Rgb c) override {
    TextLine line = Line(text, size);
    double w = line.width / s_;
    double start = a == Anchor::kStart ? x : a == Anchor::kMiddle ? x - w / 2 : x - w;
    SetFill(page_, c);
    DrawTextLine(page_, X(start), Y(y), size * s_, line);
  }
  void VerticalText(double x, double y, const std::string& text, double size, Rgb c) override {
    TextLine line = Line(text, size);
    SetFill(page_, c);
    // Rotated 90 degrees counter-clockwise; the baseline sits right of x.
    DrawTextLine(page_, X(x + size * 0.35), Y(y + line.width / s_ / 2), size * s_, line, /*vertical=*/true);
  }
  double TextWidth(const std::string& text, double size) override { return text_.Width(text, TextStyle::kNormal, size); }

 private:
  HPDF_REAL X(double x) const { return static_cast<HPDF_REAL>(left_ + x * s_); }
  HPDF_REAL Y(double y) const { return static_cast<HPDF_REAL>(top_ - y * s_); }
  TextLine Line(const std::string& text, double size) {
    auto lines = text_.Wrap(text, TextStyle::kNormal, size * s_, 1e9);
    return lines.empty() ? TextLine{} : lines[0];
  }

  HPDF_Page page_;
  PdfText& text_;
  double left_, top_, s_;
};

class Layout {
 public:
  Layout(HPDF_Doc pdf, const PdfFonts& fonts) : pdf_(pdf), fonts_(fonts), text_(fonts) {}

  void Title(const Document& doc) {
    NewPage();
    Paragraph(doc.title, TextStyle::kBold, 20, {20, 20, 20}, 6);
    Paragraph(doc.subtitle, TextStyle::kNormal, 9, {100, 100, 100}, 8);
  }

  void Block(const report::Block& b) {
    switch (b.kind) {
      case Block::Kind::kHeading: {
        double size = b.level <= 2 ? 14 : 11.5;
        Space(b.level <= 2 ? 14 : 8);
        EnsureRoom(size * 1.4 + 60);  // keep a heading with what follows it
        Paragraph(b.text, TextStyle::kBold, size, {20, 20, 20}, 4);
        if (b.level <= 2) {
          SetStroke(page_, {200, 200, 200});
          HPDF_Page_SetLineWidth(page_, 1);
          HPDF_Page_MoveTo(page_, kMarginX, static_cast<HPDF_REAL>(y_ + 2));
          HPDF_Page_LineTo(page_, static_cast<HPDF_REAL>(kMarginX + kContentW), static_cast<HPDF_REAL>(y_ + 2));
          HPDF_Page_Stroke(page_);
          Space(4);
        }
        break;
      }
      case Block::Kind::kParagraph:
        Paragraph(b.text, TextStyle::kNormal, 9.5, {33, 33, 33}, 6);
        break;
      case Block::Kind::kVerdict:
        Verdict(b);
        break;
      case Block::Kind::kKeyValues:
        KeyValues(b);
        break;
      case Block::Kind::kTable:
        Table(b);
        break;
      case Block::Kind::kChart:
        Chart(b);
        break;
      case Block::Kind::kCode:
        Code(b.text);
        break;
      case Block::Kind::kLinks:
        for (const auto& [label, href] : b.pairs) Paragraph("- " + label, TextStyle::kNormal, 9, {33, 33, 33}, 2);
        Space(4);
        break;
    }
  }

  void Footers(const std::string& title) {
    const size_t n = pages_.size();
    for (size_t i = 0; i < n; ++i) {
      HPDF_Page p = pages_[i];
      SetStroke(p, {210, 210, 210});
      HPDF_Page_SetLineWidth(p, 0.6f);
      HPDF_Page_MoveTo(p, kMarginX, kMarginBottom - 18);
      HPDF_Page_LineTo(p, static_cast<HPDF_REAL>(kPageW - kMarginX), kMarginBottom - 18);
      HPDF_Page_Stroke(p);
      SetFill(p, {110, 110, 110});
      auto left = text_.Wrap(title, TextStyle::kNormal, 8, kContentW * 0.7);
      DrawTextLine(p, kMarginX, kMarginBottom - 30, 8, left[0]);
      std::string num = std::to_string(i + 1) + " / " + std::to_string(n);
      auto right = text_.Wrap(num, TextStyle::kNormal, 8, kContentW);
      DrawTextLine(p, kPageW - kMarginX - right[0].width, kMarginBottom - 30, 8, right[0]);
    }
  }

  size_t replaced() const { return text_.replaced(); }

 private:
  void NewPage() {
    page_ = HPDF_AddPage(pdf_);
    HPDF_Page_SetWidth(page_, static_cast<HPDF_REAL>(kPageW));
    HPDF_Page_SetHeight(page_, static_cast<HPDF_REAL>(kPageH));
    pages_.push_back(page_);
    y_ = kPageH - kMarginTop;
  }
  void EnsureRoom(double h) {
    if (y_ - h < kMarginBottom) NewPage();
  }
  void Space(double h) {
    if (y_ - h < kMarginBottom) NewPage();
    else y_ -= h;
  }

  void Lines(const std::vector<TextLine>& lines, double x, double size, Rgb color, double leading) {
    for (const auto& line : lines) {
      EnsureRoom(leading);
      y_ -= leading;
      SetFill(page_, color);
      DrawTextLine(page_, x, y_ + (leading - size) * 0.6, size, line);
    }
  }

  void Paragraph(const std::string& text, TextStyle style, double size, Rgb color, double after) {
    Lines(text_.Wrap(text, style, size, kContentW), kMarginX, size, color, size * 1.45);
    Space(after);
  }

  void Verdict(const report::Block& b) {
    Rgb color = b.verdict == "PASS" ? Rgb{27, 127, 59} : b.verdict == "FAIL" ? Rgb{198, 40, 40} : Rgb{178, 106, 0};
    auto reason = text_.Wrap(b.text, TextStyle::kNormal, 9.5, kContentW - 24);
    double h = 26 + reason.size() * 13.8 + 8;
    EnsureRoom(h + 6);
    SetFill(page_, {246, 246, 246});
    HPDF_Page_Rectangle(page_, kMarginX, static_cast<HPDF_REAL>(y_ - h), static_cast<HPDF_REAL>(kContentW),
                        static_cast<HPDF_REAL>(h));
    HPDF_Page_Fill(page_);
    SetFill(page_, color);
    HPDF_Page_Rectangle(page_, kMarginX, static_cast<HPDF_REAL>(y_ - h), 6, static_cast<HPDF_REAL>(h));
    HPDF_Page_Fill(page_);
    auto verdict = text_.Wrap(b.verdict, TextStyle::kBold, 15, kContentW);
    DrawTextLine(page_, kMarginX + 16, y_ - 21, 15, verdict[0]);
    SetFill(page_, {33, 33, 33});
    double y = y_ - 26;
    for (const auto& line : reason) {
      y -= 13.8;
      DrawTextLine(page_, kMarginX + 16, y + 3, 9.5, line);
    }
    y_ -= h;
    Space(8);
  }

  void KeyValues(const report::Block& b) {
    const double key_w = 150, size = 9, leading = 12.5;
    const TextStyle value_style = b.monospace ? TextStyle::kMono : TextStyle::kNormal;
    for (const auto& [k, v] : b.pairs) {
      auto kl = text_.Wrap(k, TextStyle::kNormal, size, key_w - 8);
      auto vl = text_.Wrap(v, value_style, b.monospace ? 8.5 : size, kContentW - key_w);
      size_t rows = std::max(kl.size(), vl.size());
      if (rows * leading < 200) EnsureRoom(rows * leading);
      for (size_t i = 0; i < rows; ++i) {
        EnsureRoom(leading);
        y_ -= leading;
        if (i < kl.size()) {
          SetFill(page_, {105, 105, 105});
          DrawTextLine(page_, kMarginX, y_ + 3, size, kl[i]);
        }
        if (i < vl.size()) {
          SetFill(page_, {25, 25, 25});
          DrawTextLine(page_, kMarginX + key_w, y_ + 3, b.monospace ? 8.5 : size, vl[i]);
        }
      }
      y_ -= 2;
    }
    Space(8);
  }

  void Table(const report::Block& b) {
    const size_t cols = b.header.size();
    if (cols == 0) return;
    const double size = b.monospace ? 7 : 8, pad = 3, leading = size * 1.35;
    const TextStyle body = b.monospace ? TextStyle::kMono : TextStyle::kNormal;
    // Column widths: natural widths, shrunk in proportion when they do not fit.
    std::vector<double> natural(cols, 0);
    for (size_t c = 0; c < cols; ++c) {
      natural[c] = text_.Width(b.header[c], TextStyle::kBold, size);
      for (const auto& row : b.rows) {
        if (c < row.size()) natural[c] = std::max(natural[c], std::min(text_.Width(row[c], body, size), 260.0));
      }
      natural[c] += 2 * pad + 1;
    }
    double total = 0;
    for (double w : natural) total += w;
    std::vector<double> width = natural;
    if (total > kContentW) {
      double fixed = 0, flexible = 0;
      for (double w : natural) (w <= 40 ? fixed : flexible) += w;
      double scale = flexible > 0 ? std::max(0.05, (kContentW - fixed) / flexible) : kContentW / total;
      for (auto& w : width) w = w <= 40 ? w : w * scale;
    }

    auto row_lines = [&](const std::vector<std::string>& row, TextStyle style) {
      std::vector<std::vector<TextLine>> cells;
      size_t h = 1;
      for (size_t c = 0; c < cols; ++c) {
        cells.push_back(text_.Wrap(c < row.size() ? row[c] : "", style, size, width[c] - 2 * pad));
        h = std::max(h, cells.back().size());
      }
      return std::make_pair(cells, h * leading + 2 * pad);
    };
    auto draw_row = [&](const std::vector<std::vector<TextLine>>& cells, double h, bool header) {
      if (header) {
        SetFill(page_, {236, 236, 236});
        HPDF_Page_Rectangle(page_, kMarginX, static_cast<HPDF_REAL>(y_ - h), static_cast<HPDF_REAL>(Sum(width)),
                            static_cast<HPDF_REAL>(h));
        HPDF_Page_Fill(page_);
      }
      SetStroke(page_, {205, 205, 205});
      HPDF_Page_SetLineWidth(page_, 0.5f);
      double x = kMarginX;
      for (size_t c = 0; c < cols; ++c) {
        HPDF_Page_Rectangle(page_, static_cast<HPDF_REAL>(x), static_cast<HPDF_REAL>(y_ - h),
                            static_cast<HPDF_REAL>(width[c]), static_cast<HPDF_REAL>(h));
        HPDF_Page_Stroke(page_);
        SetFill(page_, {25, 25, 25});
        double y = y_ - pad;
        for (const auto& line : cells[c]) {
          y -= leading;
          DrawTextLine(page_, x + pad, y + (leading - size) * 0.7, size, line);
        }
        x += width[c];
      }
      y_ -= h;
    };

    auto [head_cells, head_h] = row_lines(b.header, TextStyle::kBold);
    if (b.rows.empty()) {
      EnsureRoom(head_h);
      draw_row(head_cells, head_h, true);
    }
    bool need_header = true;
    for (const auto& row : b.rows) {
      auto [cells, h] = row_lines(row, body);
      if (y_ - h < kMarginBottom) NewPage(), need_header = true;
      if (need_header) {  // at the start of the table and again on every new page
        if (y_ - head_h - h < kMarginBottom) NewPage();
        draw_row(head_cells, head_h, true);
        need_header = false;
      }
      draw_row(cells, h, false);
    }
    Space(10);
  }

  static double Sum(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s;
  }

  void Chart(const report::Block& b) {
    const double scale = kContentW / 720.0, h = 340 * scale;
    EnsureRoom(h + 8);
    PdfCanvas canvas(page_, text_, kMarginX, y_, scale);
    DrawChart(b.chart, 720, 340, canvas);
    SetStroke(page_, {210, 210, 210});
    HPDF_Page_SetLineWidth(page_, 0.5f);
    HPDF_Page_Rectangle(page_, kMarginX, static_cast<HPDF_REAL>(y_ - h), static_cast<HPDF_REAL>(kContentW),
                        static_cast<HPDF_REAL>(h));
    HPDF_Page_Stroke(page_);
    y_ -= h;
    Space(10);
  }

  void Code(const std::string& code) {
    const double size = 7, leading = 9.2;
    size_t start = 0;
    while (start <= code.size()) {
      size_t end = code.find('\n', start);
      if (end == std::string::npos) end = code.size();
      std::string line = code.substr(start, end - start);
      start = end + 1;
      if (line.empty() && start > code.size()) break;
      Rgb color = line.rfind("#", 0) == 0 ? Rgb{90, 90, 90} : Rgb{20, 20, 20};
      for (const auto& l : text_.Wrap(line.empty() ? " " : line, TextStyle::kMono, size, kContentW - 12)) {
        EnsureRoom(leading);
        SetFill(page_, {244, 244, 244});
        HPDF_Page_Rectangle(page_, kMarginX, static_cast<HPDF_REAL>(y_ - leading), static_cast<HPDF_REAL>(kContentW),
                            static_cast<HPDF_REAL>(leading));
        HPDF_Page_Fill(page_);
        y_ -= leading;
        SetFill(page_, color);
        DrawTextLine(page_, kMarginX + 6, y_ + 2.4, size, l);
      }
    }
    Space(10);
  }

  HPDF_Doc pdf_;
  PdfFonts fonts_;
  PdfText text_;
  HPDF_Page page_ = nullptr;
  std::vector<HPDF_Page> pages_;
  double y_ = 0;
};

}  // namespace

Status RenderPdf(const Document& doc, const std::filesystem::path& out_path) {
  ErrorSink sink;
  std::unique_ptr<std::remove_pointer_t<HPDF_Doc>, void (*)(HPDF_Doc)> pdf(HPDF_New(OnHpdfError, &sink), HPDF_Free);
  if (!pdf) return Unavailable("libharu could not create a PDF document");
  HPDF_SetCompressionMode(pdf.get(), HPDF_COMP_ALL);
  HPDF_UseCNSFonts(pdf.get());
  HPDF_UseCNSEncodings(pdf.get());
  PdfFonts fonts{HPDF_GetFont(pdf.get(), "Helvetica", "WinAnsiEncoding"),
                 HPDF_GetFont(pdf.get(), "Helvetica-Bold", "WinAnsiEncoding"),
                 HPDF_GetFont(pdf.get(), "Courier", "WinAnsiEncoding"),
                 HPDF_GetFont(pdf.get(), "SimSun", "GBK-EUC-H"), HPDF_GetFont(pdf.get(), "SimHei", "GBK-EUC-H")};
  if (!fonts.latin || !fonts.latin_bold || !fonts.mono || !fonts.cjk || !fonts.cjk_bold) {
    return Unavailable("libharu could not load its fonts (error 0x" + std::to_string(sink.first) + ")");
  }
  HPDF_SetInfoAttr(pdf.get(), HPDF_INFO_CREATOR, "parity render_report");
  {
    Layout layout(pdf.get(), fonts);
    layout.Title(doc);
    for (const auto& b : doc.blocks) layout.Block(b);
    layout.Footers(doc.title);
  }
  if (sink.first != HPDF_OK) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "0x%04X (detail %u)", static_cast<unsigned>(sink.first),
                  static_cast<unsigned>(sink.detail));
    return Internal(std::string("libharu reported error ") + buf + " while laying out the report");
  }
  // Into memory, then written as every report file is (support/safe_file.h: no symlink
  // followed), instead of libharu opening a path itself.
  if (HPDF_SaveToStream(pdf.get()) != HPDF_OK) return Internal("libharu could not serialise the PDF");
  std::string bytes(HPDF_GetStreamSize(pdf.get()), '\0');
  HPDF_UINT32 size = static_cast<HPDF_UINT32>(bytes.size());
  HPDF_STATUS read = HPDF_ReadFromStream(pdf.get(), reinterpret_cast<HPDF_BYTE*>(bytes.data()), &size);
  if ((read != HPDF_OK && read != HPDF_STREAM_EOF) || size != bytes.size()) {
    return Internal("libharu returned " + std::to_string(size) + " of " + std::to_string(bytes.size()) + " PDF bytes");
  }
  return WriteFileAtomic(out_path, bytes);
}

}  // namespace parity::report
