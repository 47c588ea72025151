// Test helper: decodes a PNG (libpng) to 8-bit RGB, to look at rendered pixels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace parity::report::testing {

struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3
  // Fraction of pixels that are not (near) white.
  double InkFraction() const;
  // Pixels within `tolerance` of the colour.
  size_t CountColor(uint8_t r, uint8_t g, uint8_t b, int tolerance = 40) const;
};

// Empty image (width 0) when the bytes are not a PNG.
Image DecodePng(const std::string& bytes);
Image ReadPngFile(const std::string& path);

}  // namespace parity::report::testing
