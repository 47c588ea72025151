// CRC-32C (Castagnoli), as TFRecord frames use it, and TensorFlow's masking of it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace parity::logs {

uint32_t Crc32c(const unsigned char* data, size_t n);
// TFRecord stores ((crc >> 15) | (crc << 17)) + 0xa282ead8 so that a CRC of data that
// itself contains CRCs stays well distributed.
uint32_t MaskCrc32c(uint32_t crc);

}  // namespace parity::logs
