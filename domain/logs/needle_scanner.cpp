#include "domain/logs/needle_scanner.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

// The vector helpers are internal and always inlined, so the 32-byte ABI note does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace parity::logs {
namespace {

// A rough commonness of a byte in training logs: lower is rarer. Spaces, most lower-case
// letters, digits (timestamps, values) and the punctuation of log prefixes fill most lines;
// capitals and other punctuation are rarer per position.
int Commonness(uint8_t c) {
  if (c == ' ') return 9;
  if (c >= 'a' && c <= 'z') return std::strchr("jkqxzvwyb", c) ? 5 : 8;
  if (c >= '0' && c <= '9') return 7;
  if (c >= 'A' && c <= 'Z') return 3;
  if (std::strchr(":.,-[]()/=_|", c)) return 6;
  return 3;
}

using Vec = uint8_t __attribute__((vector_size(32)));
constexpr size_t kWidth = sizeof(Vec);

inline __attribute__((always_inline)) Vec Load(const char* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline __attribute__((always_inline)) Vec Splat(uint8_t c) {
  Vec v;
  for (size_t i = 0; i < kWidth; ++i) v[i] = c;
  return v;
}

inline __attribute__((always_inline)) bool Any(Vec v) {
  uint64_t words[kWidth / 8];
  std::memcpy(words, &v, sizeof words);
  uint64_t any = 0;
  for (uint64_t w : words) any |= w;
  return any != 0;
}

// Fingerprints broadcast to full vectors; `wildcard` is all ones for one-byte needles so
// that their second byte always matches.
struct alignas(32) Fingerprint {
  Vec first, second, wildcard;
};

}  // namespace

NeedleScanner::NeedleScanner(std::vector<Needle> needles) {
  for (auto& n : needles) {
    if (n.text.empty()) continue;
    int anchor = n.anchor;
    if (n.text.size() == 1) {
      anchor = 0;
    } else if (anchor < 0 || anchor + 1 >= static_cast<int>(n.text.size())) {
      int best = 1 << 30;
      for (size_t i = 0; i + 1 < n.text.size(); ++i) {
        const int score = Commonness(static_cast<uint8_t>(n.text[i])) +
                          Commonness(static_cast<uint8_t>(n.text[i + 1]));
        if (score < best) {
          best = score;
          anchor = static_cast<int>(i);
        }
      }
    }
    Pair pair{static_cast<uint8_t>(n.text[anchor]),
              n.text.size() == 1 ? uint8_t{0} : static_cast<uint8_t>(n.text[anchor + 1]),
              n.text.size() == 1};
    size_t index = 0;
    while (index < pairs_.size() &&
           !(pairs_[index].first == pair.first && pairs_[index].second == pair.second &&
             pairs_[index].single == pair.single)) {
      ++index;
    }
    if (index == pairs_.size()) pairs_.push_back(pair);
    needles_.push_back({std::move(n.text), n.id, anchor, index});
  }
  // Nibble tables for the AVX2 path. Pairs with the same first byte share a bucket; each
  // first byte goes to the bucket where the byte pairs it would falsely admit (nibbles
  // combine across the bucket's pairs) are least common, estimated with Commonness.
  std::memset(nibble_tables_, 0, sizeof nibble_tables_);
  auto weight = [](int c) { return Commonness(static_cast<uint8_t>(c)) >= 7 ? 10.0 : 1.0; };
  auto cost = [&](uint16_t lo0, uint16_t hi0, uint16_t lo1, uint16_t hi1) {
    double first = 0, second = 0;
    for (int c = 0; c < 256; ++c) {
      if ((lo0 >> (c & 15) & 1) && (hi0 >> (c >> 4) & 1)) first += weight(c);
      if ((lo1 >> (c & 15) & 1) && (hi1 >> (c >> 4) & 1)) second += weight(c);
    }
    return first * second;
  };
  struct Bucket {
    uint16_t lo0 = 0, hi0 = 0, lo1 = 0, hi1 = 0;
  };
  Bucket buckets[7];
  std::vector<int> bucket_of_first(256, -1);
  for (const auto& pair : pairs_) {
    if (pair.single || bucket_of_first[pair.first] >= 0) continue;
    // Every pair of this first byte, as nibble masks.
    Bucket add;
    add.lo0 = uint16_t(1u << (pair.first & 15));
    add.hi0 = uint16_t(1u << (pair.first >> 4));
    for (const auto& other : pairs_) {
      if (other.single || other.first != pair.first) continue;
      add.lo1 |= uint16_t(1u << (other.second & 15));
      add.hi1 |= uint16_t(1u << (other.second >> 4));
    }
    int best = 0;
    double best_increase = 0;
    for (int b = 0; b < 7; ++b) {
      const Bucket& cur = buckets[b];
      const double before = cur.lo0 ? cost(cur.lo0, cur.hi0, cur.lo1, cur.hi1) : 0;
      const double after = cost(cur.lo0 | add.lo0, cur.hi0 | add.hi0, cur.lo1 | add.lo1, cur.hi1 | add.hi1);
      if (b == 0 || after - before < best_increase) {
        best = b;
        best_increase = after - before;
      }
    }
    Bucket& chosen = buckets[best];
    chosen.lo0 |= add.lo0;
    chosen.hi0 |= add.hi0;
    chosen.lo1 |= add.lo1;
    chosen.hi1 |= add.hi1;
    bucket_of_first[pair.first] = best;
  }
  for (const auto& pair : pairs_) {
    // A one-byte needle matches whatever follows, so it gets bucket 7 to itself.
    const int bucket = pair.single ? 7 : bucket_of_first[pair.first];
    const uint8_t bit = static_cast<uint8_t>(1u << bucket);
    nibble_tables_[pair.first & 15] |= bit;
    nibble_tables_[16 + (pair.first >> 4)] |= bit;
    for (int n = 0; n < 16; ++n) {
      if (pair.single || (pair.second & 15) == n) nibble_tables_[32 + n] |= bit;
      if (pair.single || (pair.second >> 4) == n) nibble_tables_[48 + n] |= bit;
    }
  }
  by_first_byte_.assign(256, {});
  for (size_t i = 0; i < needles_.size(); ++i) {
    by_first_byte_[pairs_[needles_[i].pair].first].push_back(static_cast<uint16_t>(i));
  }
  prints_.resize(pairs_.size() * sizeof(Fingerprint) / sizeof(Block));
  auto* prints = reinterpret_cast<Fingerprint*>(prints_.data());
  for (size_t i = 0; i < pairs_.size(); ++i) {
    prints[i].first = Splat(pairs_[i].first);
    prints[i].second = Splat(pairs_[i].second);
    prints[i].wildcard = Splat(pairs_[i].single ? 0xFF : 0x00);
  }
}

namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PARITY_SCAN_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PARITY_SCAN_CLONES
#endif


// Advances *p to the first block of kWidth positions (with one byte of look-ahead before
// end) in which some position matches a fingerprint, flags its lanes in *hits and returns
// true; returns false with *p at the first position too close to end for a whole block.
// *hits has bit i set when lane i is a candidate.
PARITY_SCAN_CLONES
bool NextCandidateBlock(const char** cursor, const char* end, const Fingerprint* prints,
                        size_t count, uint32_t* hits) {
  const char* p = *cursor;
  while (p + kWidth + 1 <= end) {
    const Vec a = Load(p);
    const Vec b = Load(p + 1);
    Vec hit = Vec{};
    for (size_t i = 0; i < count; ++i) {
      hit |= (Vec)(a == prints[i].first) & ((Vec)(b == prints[i].second) | prints[i].wildcard);
    }
    if (Any(hit)) {
      uint32_t mask = 0;
      for (size_t lane = 0; lane < kWidth; ++lane) mask |= static_cast<uint32_t>(hit[lane] != 0) << lane;
      *hits = mask;
      *cursor = p;
      return true;
    }
    p += kWidth;
  }
  *cursor = p;
  return false;
}

#if defined(__x86_64__) && defined(__GNUC__)
#define PARITY_HAVE_AVX2_SCAN 1
// The same search with nibble tables (the "Teddy" technique of Hyperscan and Rust's
// aho-corasick): each fingerprint pair is put in one of 8 buckets; a byte's low and high
// nibbles look up which buckets it may start (or continue) with a shuffle, so one block
// costs a dozen instructions however many pairs there are. Buckets over-approximate
// (nibbles combine across pairs), which only adds candidates that check() then rejects.
__attribute__((target("avx2"))) bool NextCandidateBlockAvx2(const char** cursor, const char* end,
                                                           const uint8_t* tables, uint32_t* hits) {
  const __m256i lo0 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tables)));
  const __m256i hi0 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tables + 16)));
  const __m256i lo1 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tables + 32)));
  const __m256i hi1 = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tables + 48)));
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  const char* p = *cursor;
  while (p + kWidth + 1 <= end) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 1));
    const __m256i m0 = _mm256_and_si256(_mm256_shuffle_epi8(lo0, _mm256_and_si256(a, nibble)),
                                        _mm256_shuffle_epi8(hi0, _mm256_and_si256(_mm256_srli_epi16(a, 4), nibble)));
    const __m256i m1 = _mm256_and_si256(_mm256_shuffle_epi8(lo1, _mm256_and_si256(b, nibble)),
                                        _mm256_shuffle_epi8(hi1, _mm256_and_si256(_mm256_srli_epi16(b, 4), nibble)));
    const __m256i m = _mm256_and_si256(m0, m1);
    if (!_mm256_testz_si256(m, m)) {
      *hits = ~static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(m, _mm256_setzero_si256())));
      *cursor = p;
      return true;
    }
    p += kWidth;
  }
  *cursor = p;
  return false;
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

}  // namespace

namespace {

LineFacts ScanLinePortable(const char* p, const char* end) {
  const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
  const char* line_end = nl ? static_cast<const char*>(nl) : end;
  const auto n = static_cast<size_t>(line_end - p);
  return {line_end, std::memchr(p, '\0', n) != nullptr, false};
}

#ifdef PARITY_HAVE_AVX2_SCAN
__attribute__((target("avx2"))) LineFacts ScanLineAvx2(const char* p, const char* end) {
  const __m256i newline = _mm256_set1_epi8('\n'), esc = _mm256_set1_epi8(0x1b), nul = _mm256_setzero_si256();
  const char* q = p;
  for (; static_cast<size_t>(end - q) >= kWidth; q += kWidth) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
    const auto nl = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(a, newline)));
    const auto odd = static_cast<uint32_t>(
        _mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(a, esc), _mm256_cmpeq_epi8(a, nul))));
    if ((nl | odd) == 0) continue;
    // A NUL or ESC after the line end belongs to the next line, which may share the block.
    if (nl != 0 && (odd & ((nl & (0u - nl)) - 1)) == 0) return {q + __builtin_ctz(nl), false, true};
    break;  // rare (damaged or coloured lines): the rest of the line by the plain scans
  }
  return ScanLinePortable(q, end);
}
#endif

}  // namespace

LineFacts ScanLine(const char* p, const char* end) {
#ifdef PARITY_HAVE_AVX2_SCAN
  if (HasAvx2()) return ScanLineAvx2(p, end);
#endif
  return ScanLinePortable(p, end);
}

PARITY_SCAN_CLONES
size_t CountByte(const char* p, const char* end, char byte) {
  size_t total = 0;
  const Vec target = Splat(static_cast<uint8_t>(byte));
  // Per-lane 8-bit counters, folded into the total before they can overflow.
  while (static_cast<size_t>(end - p) >= kWidth) {
    // Up to 252 blocks (a multiple of 4, so the loop unrolls cleanly) before a lane can wrap.
    const size_t blocks = std::min<size_t>(252, static_cast<size_t>(end - p) / kWidth);
    Vec counts = Vec{};
    size_t i = 0;
    for (; i + 4 <= blocks; i += 4, p += 4 * kWidth) {
      counts -= (Vec)(Load(p) == target);
      counts -= (Vec)(Load(p + kWidth) == target);
      counts -= (Vec)(Load(p + 2 * kWidth) == target);
      counts -= (Vec)(Load(p + 3 * kWidth) == target);
    }
    for (; i < blocks; ++i, p += kWidth) counts -= (Vec)(Load(p) == target);
    for (size_t lane = 0; lane < kWidth; ++lane) total += counts[lane];
  }
  for (; p < end; ++p) total += *p == byte;
  return total;
}

bool NeedleScanner::Next(const char* begin, const char* from, const char* end, const char** at,
                         int* id) const {
  if (needles_.empty()) return false;
  // A candidate p holds a fingerprint pair at p, p+1; a needle anchored at offset k starts at
  // p-k. Checks one candidate against every needle sharing its pair.
  auto check = [&](const char* p) -> bool {
    for (uint16_t index : by_first_byte_[static_cast<uint8_t>(*p)]) {
      const auto& n = needles_[index];
      const auto& pair = pairs_[n.pair];
      if (!pair.single && (p + 1 >= end || static_cast<uint8_t>(p[1]) != pair.second)) continue;
      const char* start = p - n.anchor;
      if (start < from || start < begin) continue;
      if (static_cast<size_t>(end - start) < n.text.size()) continue;
      if (std::memcmp(start, n.text.data(), n.text.size()) != 0) continue;
      *at = start;
      *id = n.id;
      return true;
    }
    return false;
  };

  const auto* prints = reinterpret_cast<const Fingerprint*>(prints_.data());
  const char* p = from;
  while (true) {
    uint32_t hits = 0;
#ifdef PARITY_HAVE_AVX2_SCAN
    const bool found = HasAvx2() ? NextCandidateBlockAvx2(&p, end, nibble_tables_, &hits)
                                 : NextCandidateBlock(&p, end, prints, pairs_.size(), &hits);
#else
    const bool found = NextCandidateBlock(&p, end, prints, pairs_.size(), &hits);
#endif
    if (!found) break;
    for (; hits != 0; hits &= hits - 1) {  // candidate lanes, lowest first
      if (check(p + __builtin_ctz(hits))) return true;
    }
    p += kWidth;
  }
  // The tail shorter than a block (plus one byte of look-ahead) is checked byte by byte.
  for (; p < end; ++p) {
    if (check(p)) return true;
  }
  return false;
}

}  // namespace parity::logs
