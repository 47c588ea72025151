#include "domain/msprobe/align.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>


namespace parity::msprobe {

const char* AlignedEditName(AlignedEdit::Kind kind) {
  switch (kind) {
    case AlignedEdit::Kind::kInsert: return "inserted";
    case AlignedEdit::Kind::kDelete: return "removed";
    case AlignedEdit::Kind::kSubstitute: return "substituted";
  }
  return "?";
}

namespace {

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

// by_id: the two dumps share one text pool, so a text's pool id stands for it (no hashing
// of texts per row: the 1 GiB bench reads about ten million rows).
std::vector<uint64_t> Signatures(const Dump& dump, bool by_id) {
  std::unordered_map<uint32_t, uint64_t> text_hash;  // pool id -> hash of its text
  auto hash_of = [&](uint32_t id) -> uint64_t {
    if (by_id) return id;
    auto [it, fresh] = text_hash.try_emplace(id, 0);
    if (fresh) it->second = std::hash<std::string>()(dump.Text(id));
    return it->second;
  };
  std::vector<uint64_t> out(dump.entries.size());
  for (size_t e = 0; e < dump.entries.size(); ++e) {
    const Entry& entry = dump.entries[e];
    // The name's dot-separated words without the numeric ones (the call counters, before
    // or after forward/backward), hashed in place.
    uint64_t h = 0;
    std::string_view name = entry.name;
    for (size_t start = 0; start <= name.size();) {
      size_t dot = name.find('.', start);
      std::string_view word = name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
      if (word.empty() || word.find_first_not_of("0123456789") != std::string_view::npos) {
        h = Mix(h, std::hash<std::string_view>()(word));
      }
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    for (uint32_t r = entry.first_row; r < entry.first_row + entry.row_count; ++r) {
      const Row& row = dump.rows[r];
      // Tensor rows only: a keyword argument passed on one side only (F.gelu(x) vs
      // F.gelu(x, approximate="tanh")) is a changed argument of the same call, not another call.
      if (!row.tensor) continue;
      // Not the dtype: a changed dtype is a changed value of the same call.
      h = Mix(Mix(h, hash_of(row.suffix)), hash_of(row.shape));
    }
    out[e] = h;
  }
  return out;
}

// Myers' shortest edit script between a[lo_a, hi_a) and b[lo_b, hi_b): the matched pairs,
// in order; false when more than max_edits edits are needed.
bool Myers(const std::vector<uint64_t>& a, size_t lo_a, size_t hi_a, const std::vector<uint64_t>& b, size_t lo_b,
           size_t hi_b, size_t max_edits, std::vector<std::pair<size_t, size_t>>& matches) {
  const long n = static_cast<long>(hi_a - lo_a), m = static_cast<long>(hi_b - lo_b);
  const long max_d = std::min<long>(n + m, static_cast<long>(max_edits));
  std::vector<long> v(2 * max_d + 3, 0);
  const long off = max_d + 1;
  std::vector<std::vector<long>> trace;  // trace[d][k + d] = v[k] before step d+1
  long found_d = -1;
  for (long d = 0; d <= max_d && found_d < 0; ++d) {
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1] : v[off + k - 1] + 1;
      long y = x - k;
      while (x < n && y < m && a[lo_a + x] == b[lo_b + y]) ++x, ++y;
      v[off + k] = x;
      if (x >= n && y >= m) {
        found_d = d;
        break;
      }
    }
    trace.emplace_back(v.begin() + (off - d), v.begin() + (off + d + 1));
  }
  if (found_d < 0) return false;
  long x = n, y = m;
  std::vector<std::pair<size_t, size_t>> reversed;
  for (long d = found_d; d > 0; --d) {
    const std::vector<long>& prev = trace[d - 1];  // v after step d-1, indexed k + (d - 1)
    auto at = [&](long k) { return prev[k + d - 1]; };
    long k = x - y;
    long prev_k = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
    long prev_x = at(prev_k), prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      --x, --y;
      reversed.push_back({lo_a + x, lo_b + y});
    }
    x = prev_x;
    y = prev_y;
  }
  while (x > 0 && y > 0) {
    --x, --y;
    reversed.push_back({lo_a + x, lo_b + y});
  }
  matches.insert(matches.end(), reversed.rbegin(), reversed.rend());
  return true;
}

}  // namespace

Alignment AlignEntries(const Dump& npu, const Dump& bench, const std::vector<int64_t>& by_name, size_t max_edits) {
  Alignment out;
  const bool by_id = npu.pool == bench.pool;
  const std::vector<uint64_t> a = Signatures(npu, by_id), b = Signatures(bench, by_id);
  const size_t n = a.size(), m = b.size();
  size_t prefix = 0;
  while (prefix < n && prefix < m && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < n - prefix && suffix < m - prefix && a[n - 1 - suffix] == b[m - 1 - suffix]) ++suffix;
  std::vector<std::pair<size_t, size_t>> matches;
  for (size_t i = 0; i < prefix; ++i) matches.push_back({i, i});
  if (!Myers(a, prefix, n - suffix, b, prefix, m - suffix, max_edits, matches)) return out;
  for (size_t i = 0; i < suffix; ++i) matches.push_back({n - suffix + i, m - suffix + i});
  out.complete = true;
  out.bench_of_npu.assign(n, -1);
  for (auto [x, y] : matches) out.bench_of_npu[x] = static_cast<int64_t>(y);
  // The runs between matches.
  size_t px = 0, py = 0;
  matches.push_back({n, m});  // sentinel
  for (auto [x, y] : matches) {
    if (x > px || y > py) {
      AlignedEdit e;
      e.kind = x == px ? AlignedEdit::Kind::kDelete : y == py ? AlignedEdit::Kind::kInsert : AlignedEdit::Kind::kSubstitute;
      e.npu_begin = static_cast<uint32_t>(px);
      e.npu_end = static_cast<uint32_t>(x);
      e.bench_begin = static_cast<uint32_t>(py);
      e.bench_end = static_cast<uint32_t>(y);
      out.edits.push_back(e);
    }
    px = x + 1;
    py = y + 1;
  }
  for (size_t e = 0; e < n && e < by_name.size(); ++e) {
    if (by_name[e] == out.bench_of_npu[e] || by_name[e] < 0) continue;
    ++out.mispaired_total;
    if (out.mispaired.size() < 5) out.mispaired.push_back({static_cast<uint32_t>(e), static_cast<uint32_t>(by_name[e])});
  }
  return out;
}

}  // namespace parity::msprobe
