// Finds, in one pass, every place in a buffer where one of a small set of literal needles
// occurs. Each needle is fingerprinted by two adjacent bytes (its rarest pair, or one the
// caller picks); 32 bytes are tested against all fingerprints at once with portable vector
// code, and only the rare positions that match a fingerprint are compared in full. This is
// what lets parse_log skip the bulk of a multi-gigabyte log at memory speed without regex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace parity::logs {

class NeedleScanner {
 public:
  struct Needle {
    std::string text;  // non-empty literal
    int id = 0;        // handed back on a hit
    int anchor = -1;   // offset of the fingerprint pair in text; -1 picks the rarest pair
  };

  NeedleScanner() = default;
  explicit NeedleScanner(std::vector<Needle> needles);

  // The first occurrence of any needle starting at or after `from` and at or after `begin`,
  // ending before `end`; returns false when there is none. Needles are matched whole.
  bool Next(const char* begin, const char* from, const char* end, const char** at, int* id) const;

  bool empty() const { return needles_.empty(); }

 private:
  struct Pair {
    uint8_t first, second;
    bool single;  // one-byte needle: only `first` is tested
  };
  struct Anchored {
    std::string text;
    int id;
    int anchor;
    size_t pair;
  };
  std::vector<Pair> pairs_;
  std::vector<Anchored> needles_;
  // Needles by the first byte of their fingerprint: a candidate is checked only against these.
  std::vector<std::vector<uint16_t>> by_first_byte_;
  // Bucket masks by low / high nibble of a pair's first byte, then of its second byte.
  uint8_t nibble_tables_[64] = {};
  // Fingerprint vectors (needle_scanner.cpp), kept as aligned raw storage so the header
  // needs no vector types.
  struct alignas(32) Block { unsigned char bytes[32]; };
  std::vector<Block> prints_;
};

// The end of the line starting at `p` (its '\n', or `end`), whether the line holds a NUL byte,
// and whether it is known to hold no ESC byte (false: not known, search it if it matters):
// what the parser needs of every candidate line, in one pass where AVX2 allows.
struct LineFacts {
  const char* end;
  bool has_nul;
  bool esc_free;
};
LineFacts ScanLine(const char* p, const char* end);

// How many times `byte` occurs in [p, end) (line counting at memory speed).
size_t CountByte(const char* p, const char* end, char byte);

}  // namespace parity::logs
