#include "png_reader.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <png.h>

namespace parity::report::testing {

double Image::InkFraction() const {
  if (width == 0) return 0;
  size_t ink = 0;
  for (size_t i = 0; i + 2 < rgb.size(); i += 3) ink += rgb[i] < 235 || rgb[i + 1] < 235 || rgb[i + 2] < 235;
  return static_cast<double>(ink) / (static_cast<double>(width) * height);
}

size_t Image::CountColor(uint8_t r, uint8_t g, uint8_t b, int tol) const {
  size_t n = 0;
  for (size_t i = 0; i + 2 < rgb.size(); i += 3) {
    n += std::abs(rgb[i] - r) <= tol && std::abs(rgb[i + 1] - g) <= tol && std::abs(rgb[i + 2] - b) <= tol;
  }
  return n;
}

Image DecodePng(const std::string& bytes) {
  Image img;
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, bytes.data(), bytes.size())) return img;
  png.format = PNG_FORMAT_RGB;
  img.rgb.resize(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, img.rgb.data(), 0, nullptr)) {
    png_image_free(&png);
    return Image{};
  }
  img.width = static_cast<int>(png.width);
  img.height = static_cast<int>(png.height);
  return img;
}

Image ReadPngFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return DecodePng(ss.str());
}

}  // namespace parity::report::testing
