#include "domain/report/pdf_text.h"

#include <iconv.h>

namespace parity::report {

namespace {

// Decodes one UTF-8 sequence at s[i]; returns its length (1 for invalid bytes).
size_t Utf8Length(std::string_view s, size_t i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
  return i + n <= s.size() ? n : 1;
}

// WinAnsi (cp1252) bytes for the few non-ASCII Latin characters a report uses.
bool ToWinAnsi(std::string_view ch, std::string& out) {
  static const std::pair<const char*, char> kMap[] = {
      {"\xC2\xB7", '\xB7'},      // middle dot
      {"\xE2\x80\x93", '\x96'},  // en dash
      {"\xE2\x80\x94", '\x97'},  // em dash
      {"\xC2\xB1", '\xB1'},      // plus-minus
      {"\xC3\x97", '\xD7'},      // multiplication sign
  };
  for (const auto& [utf8, byte] : kMap) {
    if (ch == utf8) {
      out = std::string(1, byte);
      return true;
    }
  }
  return false;
}

}  // namespace

PdfText::PdfText(const PdfFonts& fonts) : fonts_(fonts), iconv_(iconv_open("GBK", "UTF-8")) {}

PdfText::~PdfText() {
  if (iconv_ != reinterpret_cast<void*>(-1)) iconv_close(static_cast<iconv_t>(iconv_));
}

HPDF_Font PdfText::FontFor(bool cjk, TextStyle style) const {
  if (cjk) return style == TextStyle::kBold ? fonts_.cjk_bold : fonts_.cjk;
  return style == TextStyle::kBold ? fonts_.latin_bold : style == TextStyle::kMono ? fonts_.mono : fonts_.latin;
}

std::vector<PdfText::Atom> PdfText::Atomize(std::string_view s, TextStyle style) {
  std::vector<Atom> atoms;
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8Length(s, i);
    std::string_view ch = s.substr(i, n);
    i += n;
    if (n == 1) {
      char c = ch[0];
      if (c == '\n') {
        atoms.push_back({false, "\n", false});
        continue;
      }
      if (c == '\t') c = ' ';
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x80) {
        ++replaced_;
        c = '?';
      }
      bool space = c == ' ';
      // Latin characters accumulate into words; a space ends a word.
      if (!space && !atoms.empty() && !atoms.back().cjk && !atoms.back().space && atoms.back().bytes != "\n") {
        atoms.back().bytes += c;
      } else {
        atoms.push_back({false, std::string(1, c), space});
      }
      continue;
    }
    std::string latin;
    if (ToWinAnsi(ch, latin)) {
      atoms.push_back({false, latin, false});
      continue;
    }
    char out[8];
    char* in_ptr = const_cast<char*>(ch.data());
    size_t in_left = ch.size(), out_left = sizeof out;
    char* out_ptr = out;
    iconv(static_cast<iconv_t>(iconv_), nullptr, nullptr, nullptr, nullptr);
    if (iconv_ == reinterpret_cast<void*>(-1) ||
        iconv(static_cast<iconv_t>(iconv_), &in_ptr, &in_left, &out_ptr, &out_left) == static_cast<size_t>(-1)) {
      ++replaced_;
      atoms.push_back({false, "?", false});
      continue;
    }
    atoms.push_back({true, std::string(out, out_ptr - out), false});
  }
  return atoms;
}

double PdfText::AtomWidth(const Atom& a, TextStyle style, double size) const {
  HPDF_Font font = FontFor(a.cjk, style);
  HPDF_TextWidth tw = HPDF_Font_TextWidth(font, reinterpret_cast<const HPDF_BYTE*>(a.bytes.data()),
                                          static_cast<HPDF_UINT>(a.bytes.size()));
  return tw.width * size / 1000.0;
}

double PdfText::Width(std::string_view utf8, TextStyle style, double size) {
  double w = 0;
  for (const auto& a : Atomize(utf8, style)) w += AtomWidth(a, style, size);
  return w;
}

std::vector<TextLine> PdfText::Wrap(std::string_view utf8, TextStyle style, double size, double max_width) {
  std::vector<TextLine> lines(1);
  auto append = [&](const Atom& a, double w) {
    TextLine& line = lines.back();
    HPDF_Font font = FontFor(a.cjk, style);
    if (!line.runs.empty() && line.runs.back().font == font) {
      line.runs.back().bytes += a.bytes;
      line.runs.back().width += w;
    } else {
      line.runs.push_back({font, a.bytes, w});
    }
    line.width += w;
  };
  for (Atom a : Atomize(utf8, style)) {
    if (a.bytes == "\n") {
      lines.emplace_back();
      continue;
    }
    double w = AtomWidth(a, style, size);
    if (lines.back().width + w <= max_width || lines.back().runs.empty()) {
      if (w <= max_width || a.cjk) {
        if (!(a.space && lines.back().runs.empty() && lines.size() > 1)) append(a, w);
        continue;
      }
    } else if (a.space) {
      lines.emplace_back();  // the space that would overflow becomes the break
      continue;
    } else if (w <= max_width) {
      lines.emplace_back();
      append(a, w);
      continue;
    }
    // A Latin word longer than the line (a path, a hash): break it by characters.
    if (!lines.back().runs.empty()) lines.emplace_back();
    for (char c : a.bytes) {
      Atom one{false, std::string(1, c), false};
      double cw = AtomWidth(one, style, size);
      if (lines.back().width + cw > max_width && !lines.back().runs.empty()) lines.emplace_back();
      append(one, cw);
    }
  }
  return lines;
}

void DrawTextLine(HPDF_Page page, double x, double y, double size, const TextLine& line, bool vertical) {
  HPDF_Page_BeginText(page);
  if (vertical) {
    HPDF_Page_SetTextMatrix(page, 0, 1, -1, 0, static_cast<HPDF_REAL>(x), static_cast<HPDF_REAL>(y));
  } else {
    HPDF_Page_MoveTextPos(page, static_cast<HPDF_REAL>(x), static_cast<HPDF_REAL>(y));
  }
  for (const auto& run : line.runs) {
    HPDF_Page_SetFontAndSize(page, run.font, static_cast<HPDF_REAL>(size));
    HPDF_Page_ShowText(page, run.bytes.c_str());
  }
  HPDF_Page_EndText(page);
}

}  // namespace parity::report
