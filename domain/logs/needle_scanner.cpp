#include "domain/logs/needle_scanner.h"

#include <algorithm>
#include <cstring>

// The vector helpers are internal and always inlined, so the 32-byte ABI note does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace parity::logs {
namespace {

// A rough rarity of a byte in training logs: lower is rarer. Lower-case letters and spaces
// fill most lines; capitals, most punctuation and digits are rarer per position.
int Commonness(uint8_t c) {
  if (c == ' ') return 9;
  if (c >= 'a' && c <= 'z') {
    static const char kFrequent[] = "etaoinsrhlducm";
    return std::strchr(kFrequent, c) ? 8 : 5;
  }
  if (c >= '0' && c <= '9') return 4;
  if (c >= 'A' && c <= 'Z') return 2;
  return 3;
}

using Vec = uint8_t __attribute__((vector_size(32)));
constexpr size_t kWidth = sizeof(Vec);

inline __attribute__((always_inline)) Vec Load(const char* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

Vec Splat(uint8_t c) {
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
PARITY_SCAN_CLONES
bool NextCandidateBlock(const char** cursor, const char* end, const Fingerprint* prints,
                        size_t count, Vec* hits) {
  const char* p = *cursor;
  while (p + kWidth + 1 <= end) {
    const Vec a = Load(p);
    const Vec b = Load(p + 1);
    Vec hit = Vec{};
    for (size_t i = 0; i < count; ++i) {
      hit |= (Vec)(a == prints[i].first) & ((Vec)(b == prints[i].second) | prints[i].wildcard);
    }
    if (Any(hit)) {
      *hits = hit;
      *cursor = p;
      return true;
    }
    p += kWidth;
  }
  *cursor = p;
  return false;
}

}  // namespace

bool NeedleScanner::Next(const char* begin, const char* from, const char* end, const char** at,
                         int* id) const {
  if (needles_.empty()) return false;
  // A candidate p holds a fingerprint pair at p, p+1; a needle anchored at offset k starts at
  // p-k. Checks one candidate against every needle sharing its pair.
  auto check = [&](const char* p) -> bool {
    for (const auto& n : needles_) {
      const auto& pair = pairs_[n.pair];
      if (static_cast<uint8_t>(*p) != pair.first) continue;
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
    Vec hits;
    if (!NextCandidateBlock(&p, end, prints, pairs_.size(), &hits)) break;
    for (size_t lane = 0; lane < kWidth; ++lane) {
      if (hits[lane] && check(p + lane)) return true;
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
