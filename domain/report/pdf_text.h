// Mixed Chinese/Latin text for libharu: splits UTF-8 into runs per font, converts the
// Chinese runs to GBK, measures and wraps lines. Used by the PDF renderer only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <hpdf.h>

namespace parity::report {

struct PdfFonts {
  HPDF_Font latin, latin_bold, mono, cjk, cjk_bold;
};

enum class TextStyle { kNormal, kBold, kMono };

struct TextRun {
  HPDF_Font font;
  std::string bytes;  // in the font's encoding (WinAnsi or GBK)
  double width;       // points, at the line's size
};

struct TextLine {
  std::vector<TextRun> runs;
  double width = 0;
};

class PdfText {
 public:
  explicit PdfText(const PdfFonts& fonts);
  ~PdfText();
  PdfText(const PdfText&) = delete;
  PdfText& operator=(const PdfText&) = delete;

  // Wraps `utf8` into lines no wider than `max_width` (newlines force a break). Latin
  // words stay whole unless longer than a line; each Chinese character may break.
  std::vector<TextLine> Wrap(std::string_view utf8, TextStyle style, double size, double max_width);
  double Width(std::string_view utf8, TextStyle style, double size);
  // Characters that have no glyph in GBK or WinAnsi, replaced by '?'.
  size_t replaced() const { return replaced_; }

 private:
  struct Atom {
    bool cjk;
    std::string bytes;
    bool space;  // a breakable space
  };
  std::vector<Atom> Atomize(std::string_view utf8, TextStyle style);
  double AtomWidth(const Atom& a, TextStyle style, double size) const;
  HPDF_Font FontFor(bool cjk, TextStyle style) const;

  PdfFonts fonts_;
  void* iconv_;  // iconv_t UTF-8 -> GBK
  size_t replaced_ = 0;
};

// Draws a line at (x, baseline y) in `size`; the caller sets the fill colour. `vertical`
// turns the baseline 90 degrees counter-clockwise (an axis title), running up from (x, y).
void DrawTextLine(HPDF_Page page, double x, double y, double size, const TextLine& line, bool vertical = false);

}  // namespace parity::report
