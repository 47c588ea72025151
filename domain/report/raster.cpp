#include "domain/report/raster.h"

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <memory>

#include <ft2build.h>
#include FT_FREETYPE_H
#include <png.h>

namespace parity::report {

Result<std::filesystem::path> FindChartFont() {
  static const char* kCandidates[] = {
      "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
      "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
      "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
      "/usr/share/fonts/truetype/lato/Lato-Regular.ttf",
  };
  std::string searched;
  for (const char* path : kCandidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) return std::filesystem::path(path);
    searched += std::string(searched.empty() ? "" : ", ") + path;
  }
  return Unavailable("no font for chart text found (searched " + searched + ")")
      .WithHint("install the Debian package fonts-dejavu-core");
}

Result<std::filesystem::path> FindChartCjkFont() {
  static const char* kCandidates[] = {
      "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
      "/usr/share/fonts/opentype/noto/NotoSansCJKsc-Regular.otf",
      "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
      "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc",
      "/usr/share/fonts/truetype/arphic/uming.ttc",
  };
  std::string searched;
  for (const char* path : kCandidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(path, ec)) return std::filesystem::path(path);
    searched += std::string(searched.empty() ? "" : ", ") + path;
  }
  return Unavailable("no font with Chinese glyphs for chart text found (searched " + searched + ")")
      .WithHint("install the Debian package fonts-noto-cjk (or render the report with language \"en\")");
}

namespace {

struct FtLibrary {
  FT_Library lib = nullptr;
  FT_Face face = nullptr;
  FT_Face cjk = nullptr;
  ~FtLibrary() {
    if (face) FT_Done_Face(face);
    if (cjk) FT_Done_Face(cjk);
    if (lib) FT_Done_FreeType(lib);
  }
};

// Code points of UTF-8 text; a malformed byte stands for itself (U+FFFD would hide it).
std::u32string DecodeUtf8(const std::string& s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) {
      out.push_back(c);
      ++i;
      continue;
    }
    char32_t cp = len == 1 ? c : c & (0x7f >> len);
    for (int k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    out.push_back(cp);
    i += len;
  }
  return out;
}

bool HasNonAscii(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
}

bool SpecHasNonAscii(const ChartSpec& spec) {
  bool any = HasNonAscii(spec.title) || HasNonAscii(spec.x_label) || HasNonAscii(spec.y_label) ||
             HasNonAscii(spec.note) || HasNonAscii(spec.log_suffix) || (spec.hline && HasNonAscii(spec.hline->label));
  for (const auto& s : spec.series) any = any || HasNonAscii(s.label);
  return any;
}

// The Simplified Chinese face of a collection (Noto Sans CJK holds JP, KR, SC, TC, HK).
FT_Error OpenCjkFace(FT_Library lib, const std::filesystem::path& path, FT_Face* face) {
  FT_Face probe = nullptr;
  FT_Error err = FT_New_Face(lib, path.c_str(), -1, &probe);
  if (err) return err;
  FT_Long faces = probe->num_faces;
  FT_Done_Face(probe);
  for (FT_Long i = 0; i < faces; ++i) {
    if (FT_New_Face(lib, path.c_str(), i, face) != 0) continue;
    std::string family = (*face)->family_name ? (*face)->family_name : "";
    if (family.find(" SC") != std::string::npos) return 0;
    FT_Done_Face(*face);
    *face = nullptr;
  }
  return FT_New_Face(lib, path.c_str(), 0, face);
}

class RasterCanvas : public Canvas {
 public:
  // `cjk` may be null when the chart's text is ASCII only.
  RasterCanvas(int w, int h, double scale, FT_Face face, FT_Face cjk)
      : w_(w), h_(h), scale_(scale), face_(face), cjk_(cjk), rgb_(static_cast<size_t>(w) * h * 3, 255) {}

  const std::vector<uint8_t>& pixels() const { return rgb_; }

  void Polyline(const std::vector<Point>& points, const Stroke& s) override {
    std::vector<Point> p;
    for (const auto& q : points) p.push_back({q.x * scale_, q.y * scale_});
    double width = std::max(1.0, s.width * scale_);
    if (s.dash == Dash::kSolid) {
      Stamp(p, width, s.color);
      return;
    }
    // Walks the polyline, emitting the "on" stretches of the dash pattern.
    double on = s.dash == Dash::kDashed ? 7 * scale_ : 0.01;
    double off = s.dash == Dash::kDashed ? 4 * scale_ : 3 * s.width * scale_;
    bool drawing = true;
    double left = on;
    std::vector<Point> piece{p.empty() ? Point{} : p[0]};
    for (size_t i = 1; i < p.size(); ++i) {
      Point a = p[i - 1];
      const Point b = p[i];
      double seg = std::hypot(b.x - a.x, b.y - a.y);
      while (seg > 0) {
        double step = std::min(seg, left);
        Point m{a.x + (b.x - a.x) * step / seg, a.y + (b.y - a.y) * step / seg};
        if (drawing) piece.push_back(m);
        seg -= step;
        left -= step;
        a = m;
        if (left <= 1e-9) {
          if (drawing) Stamp(piece, width, s.color);
          drawing = !drawing;
          left = drawing ? on : off;
          piece.assign(1, a);
        }
      }
      if (drawing) piece.back() = b;
    }
    if (drawing && piece.size() > 1) Stamp(piece, width, s.color);
  }

  void FillRect(double x, double y, double w, double h, Rgb c) override {
    int xa = std::max(0, static_cast<int>(std::lround(x * scale_)));
    int ya = std::max(0, static_cast<int>(std::lround(y * scale_)));
    int xb = std::min(w_, static_cast<int>(std::lround((x + w) * scale_)));
    int yb = std::min(h_, static_cast<int>(std::lround((y + h) * scale_)));
    for (int j = ya; j < yb; ++j)
      for (int i = xa; i < xb; ++i) Blend(i, j, c, 1.0);
  }

  void Text(double x, double y, const std::string& text, double size, Anchor a, Rgb c) override {
    double w = TextWidth(text, size);
    double start = a == Anchor::kStart ? x : a == Anchor::kMiddle ? x - w / 2 : x - w;
    DrawRun(start * scale_, y * scale_, text, size, c, false);
  }

  void VerticalText(double x, double y, const std::string& text, double size, Rgb c) override {
    double w = TextWidth(text, size);
    // Baseline runs upwards; shift right by the ascent so the glyphs centre on x.
    DrawRun((x + size * 0.35) * scale_, (y + w / 2) * scale_, text, size, c, true);
  }

  double TextWidth(const std::string& text, double size) override {
    double adv = 0;
    for (char32_t ch : DecodeUtf8(text)) {
      FT_Face f = FaceFor(ch, size);
      if (FT_Load_Char(f, ch, FT_LOAD_DEFAULT) == 0) adv += f->glyph->advance.x / 64.0;
    }
    return adv / scale_;
  }

 private:
  void Blend(int x, int y, Rgb c, double alpha) {
    if (x < 0 || y < 0 || x >= w_ || y >= h_ || alpha <= 0) return;
    alpha = std::min(alpha, 1.0);
    uint8_t* px = &rgb_[(static_cast<size_t>(y) * w_ + x) * 3];
    px[0] = static_cast<uint8_t>(std::lround(px[0] + (c.r - px[0]) * alpha));
    px[1] = static_cast<uint8_t>(std::lround(px[1] + (c.g - px[1]) * alpha));
    px[2] = static_cast<uint8_t>(std::lround(px[2] + (c.b - px[2]) * alpha));
  }

  // Coverage of each pixel is the maximum over the segments, so overlapping segments at a
  // joint do not darken it; the stroke is then composited once.
  void Stamp(const std::vector<Point>& p, double width, Rgb c) {
    if (p.empty()) return;
    double r = width / 2;
    double minx = p[0].x, maxx = p[0].x, miny = p[0].y, maxy = p[0].y;
    for (const auto& q : p) {
      minx = std::min(minx, q.x), maxx = std::max(maxx, q.x);
      miny = std::min(miny, q.y), maxy = std::max(maxy, q.y);
    }
    int bx0 = std::max(0, static_cast<int>(std::floor(minx - r - 1)));
    int by0 = std::max(0, static_cast<int>(std::floor(miny - r - 1)));
    int bx1 = std::min(w_ - 1, static_cast<int>(std::ceil(maxx + r + 1)));
    int by1 = std::min(h_ - 1, static_cast<int>(std::ceil(maxy + r + 1)));
    if (bx0 > bx1 || by0 > by1) return;
    int bw = bx1 - bx0 + 1;
    std::vector<float> cov(static_cast<size_t>(bw) * (by1 - by0 + 1), 0.f);
    for (size_t i = 0; i + 1 < std::max<size_t>(p.size(), 2); ++i) {
      Point a = p[i], b = p.size() > 1 ? p[i + 1] : p[i];
      int sx0 = std::max(bx0, static_cast<int>(std::floor(std::min(a.x, b.x) - r - 1)));
      int sx1 = std::min(bx1, static_cast<int>(std::ceil(std::max(a.x, b.x) + r + 1)));
      int sy0 = std::max(by0, static_cast<int>(std::floor(std::min(a.y, b.y) - r - 1)));
      int sy1 = std::min(by1, static_cast<int>(std::ceil(std::max(a.y, b.y) + r + 1)));
      double dx = b.x - a.x, dy = b.y - a.y, len2 = dx * dx + dy * dy;
      for (int y = sy0; y <= sy1; ++y) {
        for (int x = sx0; x <= sx1; ++x) {
          double cx = x + 0.5, cy = y + 0.5;
          double t = len2 > 0 ? std::clamp(((cx - a.x) * dx + (cy - a.y) * dy) / len2, 0.0, 1.0) : 0;
          double d = std::hypot(cx - (a.x + t * dx), cy - (a.y + t * dy));
          float v = static_cast<float>(std::clamp(r + 0.5 - d, 0.0, 1.0));
          float& slot = cov[static_cast<size_t>(y - by0) * bw + (x - bx0)];
          slot = std::max(slot, v);
        }
      }
    }
    for (int y = by0; y <= by1; ++y)
      for (int x = bx0; x <= bx1; ++x) Blend(x, y, c, cov[static_cast<size_t>(y - by0) * bw + (x - bx0)]);
  }

  // The Latin face when it has the glyph, else the Chinese one (its missing-glyph box shows
  // a character neither has), sized for `size` points.
  FT_Face FaceFor(char32_t ch, double size) {
    FT_Face f = cjk_ && FT_Get_Char_Index(face_, ch) == 0 ? cjk_ : face_;
    FT_Set_Char_Size(f, 0, static_cast<FT_F26Dot6>(size * scale_ * 64), 72, 72);
    return f;
  }

  void DrawRun(double pen_x, double pen_y, const std::string& text, double size, Rgb c, bool vertical) {
    double pen = 0;
    for (char32_t ch : DecodeUtf8(text)) {
      FT_Face f = FaceFor(ch, size);
      if (FT_Load_Char(f, ch, FT_LOAD_RENDER) != 0) continue;
      const FT_GlyphSlot g = f->glyph;
      const FT_Bitmap& bm = g->bitmap;
      for (unsigned row = 0; row < bm.rows; ++row) {
        for (unsigned col = 0; col < bm.width; ++col) {
          double a = bm.buffer[row * bm.pitch + col] / 255.0;
          if (a <= 0) continue;
          double gx = pen + g->bitmap_left + col;  // along the baseline
          double gy = -g->bitmap_top + row;        // below the baseline is positive
          int x = vertical ? static_cast<int>(std::lround(pen_x + gy)) : static_cast<int>(std::lround(pen_x + gx));
          int y = vertical ? static_cast<int>(std::lround(pen_y - gx)) : static_cast<int>(std::lround(pen_y + gy));
          Blend(x, y, c, a);
        }
      }
      pen += g->advance.x / 64.0;
    }
  }

  int w_, h_;
  double scale_;
  FT_Face face_, cjk_;
  std::vector<uint8_t> rgb_;
};

void AppendBytes(png_structp png, png_bytep data, png_size_t length) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  out->append(reinterpret_cast<const char*>(data), length);
}

Result<std::string> EncodePng(const std::vector<uint8_t>& rgb, int w, int h) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (!png) return Internal("png_create_write_struct failed");
  png_infop info = png_create_info_struct(png);
  std::string out;
  std::vector<png_bytep> rows(h);
  if (!info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return Internal("libpng failed to encode a chart");
  }
  png_set_write_fn(png, &out, AppendBytes, nullptr);
  png_set_IHDR(png, info, w, h, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, 9);
  png_write_info(png, info);
  for (int y = 0; y < h; ++y) rows[y] = const_cast<png_bytep>(&rgb[static_cast<size_t>(y) * w * 3]);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

}  // namespace

Result<std::string> ChartToPng(const ChartSpec& spec, double width, double height, double scale) {
  PARITY_ASSIGN_OR_RETURN(auto font, FindChartFont());
  FtLibrary ft;
  if (FT_Init_FreeType(&ft.lib) != 0) return Unavailable("FreeType failed to initialise");
  if (FT_New_Face(ft.lib, font.c_str(), 0, &ft.face) != 0) {
    return Unavailable("FreeType cannot open font " + font.string());
  }
  if (SpecHasNonAscii(spec)) {
    PARITY_ASSIGN_OR_RETURN(auto cjk, FindChartCjkFont());
    if (OpenCjkFace(ft.lib, cjk, &ft.cjk) != 0) return Unavailable("FreeType cannot open font " + cjk.string());
  }
  int w = static_cast<int>(std::lround(width * scale));
  int h = static_cast<int>(std::lround(height * scale));
  RasterCanvas canvas(w, h, scale, ft.face, ft.cjk);
  DrawChart(spec, width, height, canvas);
  return EncodePng(canvas.pixels(), w, h);
}

}  // namespace parity::report
