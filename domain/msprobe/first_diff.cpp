#include "domain/msprobe/first_diff.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "domain/msprobe/noise_envelope.h"
#include "domain/msprobe/pyrepr.h"

namespace parity::msprobe {

using json = nlohmann::json;

const char* CriteriaModeName(DiffCriteria::Mode mode) {
  switch (mode) {
    case DiffCriteria::Mode::kMsprobe: return "msprobe";
    case DiffCriteria::Mode::kBitwise: return "bitwise";
    case DiffCriteria::Mode::kTolerance: return "tolerance";
    case DiffCriteria::Mode::kCalibrated: return "calibrated";
  }
  return "?";
}

bool IsInPlaceApi(std::string_view entry) {
  size_t first = entry.find('.');
  if (first == std::string_view::npos) return false;
  size_t second = entry.find('.', first + 1);
  std::string_view api =
      entry.substr(first + 1, second == std::string_view::npos ? std::string_view::npos : second - first - 1);
  if (api.size() > 4 && api.rfind("__i", 0) == 0 && api.substr(api.size() - 2) == "__") return true;  // __iadd__
  return api.size() > 1 && api.back() == '_' && api.front() != '_';
}

namespace {

bool RowDiverges(const RowFacts& row, const DiffCriteria& criteria) {
  if (!row.matched) return true;
  switch (criteria.mode) {
    case DiffCriteria::Mode::kMsprobe:
    case DiffCriteria::Mode::kBitwise: return !row.identical;
    case DiffCriteria::Mode::kTolerance:
    case DiffCriteria::Mode::kCalibrated: return row.exceeds;
  }
  return !row.identical;
}

// The rows discounted as noise: few (md5 mode only) in tables of millions of rows, so a
// map rather than a slot per row (which was the largest allocation of a statistics walk).
class RowNoise {
 public:
  bool Has(size_t r) const { return !by_row_.empty() && by_row_.count(r) != 0; }
  const NoiseFinding& At(size_t r) const { return by_row_.at(r); }
  void Set(const NoiseFinding& finding) { by_row_.insert_or_assign(finding.row, finding); }

 private:
  std::unordered_map<size_t, NoiseFinding> by_row_;
};

// md5 mode: the rows whose CRC one side recorded only after a later in-place op changed
// the tensor. For each in-place op's output that is equal on both sides, its value key
// (CRC, shape, dtype) is a value the tensor reached later; a differing row earlier in the
// table whose value on one side is that key was hashed late on that side.
void FindLateHashes(const DiffInput& input, RowNoise& noise) {
  if (input.npu_value.size() != input.rows.size() || input.bench_value.size() != input.rows.size()) return;
  std::vector<int8_t> inplace(input.entries.size(), -1);
  auto is_inplace = [&](uint32_t entry) {
    if (inplace[entry] < 0) inplace[entry] = IsInPlaceApi(input.entries[entry]) ? 1 : 0;
    return inplace[entry] == 1;
  };
  std::unordered_map<uint64_t, size_t> last_agreed;  // value key -> the last row with it
  for (size_t r = 0; r < input.rows.size(); ++r) {
    const RowFacts& row = input.rows[r];
    if (row.output && row.identical && input.npu_value[r] != 0 && is_inplace(row.entry)) {
      last_agreed[input.npu_value[r]] = r;
    }
  }
  if (last_agreed.empty()) return;
  for (size_t r = 0; r < input.rows.size(); ++r) {
    const RowFacts& row = input.rows[r];
    if (!row.matched || row.identical || !row.tensor) continue;
    if (row.stats_compared && !row.stats_equal) continue;  // the synchronous statistics differ: real
    for (bool candidate : {true, false}) {
      uint64_t key = candidate ? input.npu_value[r] : input.bench_value[r];
      auto it = key == 0 ? last_agreed.end() : last_agreed.find(key);
      if (it == last_agreed.end() || it->second <= r) continue;
      noise.Set(NoiseFinding{row.entry, r, NoiseKind::kCrcAfterInplace, it->second, candidate});
      break;
    }
  }
}

// md5 mode: whether the difference at row r is seen again after `after` (a later row that
// still differs holds either side's value of r).
class Propagation {
 public:
  Propagation(const DiffInput& input, const RowNoise& noise) {
    if (input.npu_value.size() != input.rows.size()) return;
    for (size_t r = 0; r < input.rows.size(); ++r) {
      const RowFacts& row = input.rows[r];
      if (!row.matched || row.identical || noise.Has(r)) continue;
      if (input.npu_value[r] != 0) last_npu_[input.npu_value[r]] = r;
      if (input.bench_value[r] != 0) last_bench_[input.bench_value[r]] = r;
    }
  }
  bool SeenAfter(const DiffInput& input, size_t r, size_t after) const {
    auto later = [&](const std::unordered_map<uint64_t, size_t>& m, uint64_t key) {
      auto it = m.find(key);
      return it != m.end() && it->second > after;
    };
    return later(last_npu_, input.npu_value[r]) || later(last_bench_, input.bench_value[r]);
  }

 private:
  std::unordered_map<uint64_t, size_t> last_npu_, last_bench_;
};

std::vector<RowText> Texts(const DiffInput& input, const std::vector<size_t>& rows) {
  std::vector<RowText> out;
  for (size_t r : rows) out.push_back(input.row_text ? input.row_text(r) : RowText{std::to_string(r), {}, {}, {}});
  return out;
}

}  // namespace

FirstDiff FindFirstDiff(const DiffInput& input, const DiffCriteria& criteria, size_t max_next) {
  FirstDiff result;
  auto& counts = result.counts;
  counts.rows = input.rows.size();
  counts.entries = input.entries.size();
  RowNoise noise;
  FindLateHashes(input, noise);
  const Propagation propagation(input, noise);
  const bool md5 = !input.npu_value.empty();

  bool upstream_identical = true;
  std::optional<uint32_t> earlier_difference;
  std::vector<NoiseFinding> pending_noise;
  std::vector<size_t> divergent, differing_inputs, differing_arguments, differing_outputs, unmatched, inputs, outputs;
  size_t i = 0;
  while (i < input.rows.size()) {
    uint32_t entry = input.rows[i].entry;
    size_t end = i;
    while (end < input.rows.size() && input.rows[end].entry == entry) ++end;
    std::string_view name = input.entries[entry];

    bool ignored = false;
    for (const std::string& pattern : criteria.ignore) {
      if (!pattern.empty() && name.find(pattern) != std::string::npos) ignored = true;
    }
    for (auto* list : {&divergent, &differing_inputs, &differing_arguments, &differing_outputs, &unmatched, &inputs,
                       &outputs}) {
      list->clear();
    }
    bool any_difference = false, any_matched = false, output_differs = false, msprobe_flags = false;
    for (size_t r = i; r < end; ++r) {
      const RowFacts& row = input.rows[r];
      if (row.matched) {
        ++counts.matched;
        any_matched = true;
      } else {
        ++counts.unmatched_npu;
        unmatched.push_back(r);
      }
      if (row.identical) ++counts.identical_rows;
      if (!row.identical) any_difference = true;
      if (row.level != Level::kPass) msprobe_flags = true;
      const bool differs = !row.matched || (!row.identical && !noise.Has(r));
      (row.output ? outputs : inputs).push_back(r);
      if (row.output) {
        output_differs |= differs;
        if (differs && RowDiverges(row, criteria)) differing_outputs.push_back(r);
      } else if (!row.tensor) {
        if (differs) differing_arguments.push_back(r);
      } else if (differs) {
        differing_inputs.push_back(r);
      }
    }
    // md5: a CRC difference that only the CRC shows (equal statistics) and that nothing
    // later shows again is not counted.
    if (md5 && !differing_outputs.empty() && differing_arguments.empty() && unmatched.empty()) {
      bool confirmed = false;
      for (size_t r : differing_outputs) {
        const RowFacts& row = input.rows[r];
        if (!row.stats_compared || !row.stats_equal || propagation.SeenAfter(input, r, end - 1)) confirmed = true;
      }
      if (!confirmed) {
        for (size_t r : differing_outputs) noise.Set(NoiseFinding{entry, r, NoiseKind::kCrcUnconfirmed, {}, false});
        for (size_t r : differing_inputs) {
          const RowFacts& row = input.rows[r];
          if (row.stats_compared && row.stats_equal) noise.Set(NoiseFinding{entry, r, NoiseKind::kCrcUnconfirmed, {}, false});
        }
        std::erase_if(differing_inputs, [&](size_t r) { return noise.Has(r); });
        differing_outputs.clear();
        output_differs = false;
      }
    }
    const bool entry_divergent = !differing_outputs.empty() || !differing_arguments.empty() || !unmatched.empty();
    for (size_t r = i; r < end; ++r) {
      if (!noise.Has(r)) continue;
      ++result.noise_total;
      if (!result.entry && !ignored) pending_noise.push_back(noise.At(r));
    }
    if (!ignored && msprobe_flags && !result.msprobe_first_flagged) result.msprobe_first_flagged = entry;
    if (!ignored && any_difference && !result.first_any_difference) result.first_any_difference = entry;
    for (size_t r : differing_outputs) divergent.push_back(r);
    for (size_t r : differing_arguments) divergent.push_back(r);
    for (size_t r : unmatched) {
      if (!input.rows[r].output) divergent.push_back(r);
    }
    counts.divergent_rows += divergent.size();

    if (ignored) {
      ++counts.ignored_entries;
    } else if (entry_divergent) {
      ++counts.divergent_entries;
      if (!result.entry) {
        result.entry = entry;
        result.divergent_rows = divergent;
        result.input_rows = inputs;
        result.output_rows = outputs;
        result.noise = pending_noise;
        Evidence& e = result.evidence;
        e.differing_outputs = differing_outputs;
        e.differing_inputs = differing_inputs;
        e.differing_arguments = differing_arguments;
        e.unmatched_rows = unmatched;
        e.any_matched = any_matched;
        e.upstream_identical = upstream_identical;
        e.earlier_difference = earlier_difference;
        e.statistics_only = input.statistics_only;
        for (size_t r : divergent) {
          if (input.rows[r].matched && input.rows[r].level == Level::kPass) e.msprobe_passes.push_back(r);
        }
        std::vector<RowText> outs = Texts(input, differing_outputs);
        result.decision = Decide(e, name, Texts(input, differing_inputs), Texts(input, differing_arguments), outs,
                                 earlier_difference ? input.entries[*earlier_difference] : std::string_view());
        result.verdict = CauseName(result.decision->cause);
        result.explanation = result.decision->sentence;
      } else if (result.next_entries.size() < max_next) {
        result.next_entries.push_back(entry);
      }
    } else {
      if (output_differs) {  // within the criterion: the first such API is the upstream of later ones
        upstream_identical = false;
        if (!earlier_difference) earlier_difference = entry;
      } else if (!differing_inputs.empty() && !result.entry) {
        for (size_t r : differing_inputs) pending_noise.push_back({entry, r, NoiseKind::kMaskedInput, {}, false});
      }
    }
    i = end;
  }
  if (!result.entry) {
    result.noise = pending_noise;
    result.explanation = "no API diverges under the " + std::string(CriteriaModeName(criteria.mode)) + " criterion";
    if (result.noise_total > 0) {
      result.explanation += " (" + std::to_string(result.noise_total) + " differing row(s) discounted as noise, each "
                            "with its reason)";
    }
  }
  return result;
}

DiffInput FactsFromTable(const CompareTable& table, const DiffCriteria& criteria) {
  DiffInput input;
  const Dump& npu = *table.npu;
  std::vector<int64_t> entry_index(npu.entries.size(), -1);
  input.rows.reserve(table.rows.size());
  std::vector<int8_t> dtype_is_tensor;  // by pool id: -1 not yet known
  for (const CompareRow& r : table.rows) {
    const Row& row = table.NpuRow(r);
    if (entry_index[row.entry] < 0) {
      entry_index[row.entry] = static_cast<int64_t>(input.entries.size());
      input.entries.push_back(npu.entries[row.entry].name);
    }
    RowFacts facts;
    facts.entry = static_cast<uint32_t>(entry_index[row.entry]);
    facts.output = row.state == RowState::kOutput || row.state == RowState::kParametersGrad;
    if (row.dtype >= dtype_is_tensor.size()) dtype_is_tensor.resize(row.dtype + 1, -1);
    int8_t& tensor = dtype_is_tensor[row.dtype];
    if (tensor < 0) tensor = npu.Text(row.dtype).find("class") == std::string::npos ? 1 : 0;
    facts.tensor = tensor == 1;
    facts.matched = r.bench >= 0;
    facts.identical = table.Identical(r);
    facts.level = r.level;
    if (criteria.mode == DiffCriteria::Mode::kCalibrated && facts.matched && !facts.identical) {
      facts.exceeds = !criteria.noise || BeyondNoise(table, r, *criteria.noise);
    }
    if (criteria.mode == DiffCriteria::Mode::kTolerance && facts.matched && !facts.identical) {
      if (table.mode == DumpMode::kMd5) {
        facts.exceeds = true;
      } else {
        for (int s = 0; s < 4 && !facts.exceeds; ++s) {
          std::string a = table.NpuStat(r, s), b = table.BenchStat(r, s);
          if (a == b) continue;
          auto x = PyParseFloat(a), y = PyParseFloat(b);
          if (!x || !y || std::isnan(*x) || std::isnan(*y)) {
            facts.exceeds = true;
          } else if (std::fabs(*x - *y) > criteria.abs_tol + criteria.rel_tol * std::fabs(*y) ||
                     (std::isinf(*x) || std::isinf(*y))) {
            facts.exceeds = true;
          }
        }
        if (!table.SameText(row.dtype, table.BenchRow(r)->dtype) || !table.SameText(row.shape, table.BenchRow(r)->shape)) {
          facts.exceeds = true;
        }
      }
    }
    if (table.mode == DumpMode::kMd5 && facts.matched && facts.tensor) {
      const Row& b = *table.BenchRow(r);
      bool any_number = false, same_kinds = true;
      for (int s = 0; s < 4; ++s) {
        same_kinds &= row.stat_kind(s) == b.stat_kind(s);
        any_number |= row.stat_kind(s) == StatValue::Kind::kNumber;
      }
      facts.stats_compared = same_kinds && any_number;
      facts.stats_equal = facts.stats_compared;
      for (int s = 0; s < 4 && facts.stats_equal; ++s) facts.stats_equal = table.SameStatAt(r, s);
    }
    input.rows.push_back(facts);
  }
  input.statistics_only = table.mode != DumpMode::kMd5;
  if (table.mode == DumpMode::kMd5) {
    // Value keys: the CRC with a hash of the shape and dtype texts (cached per pool id).
    auto keys = [](const Dump& dump) {
      return [&dump, cache = std::unordered_map<uint64_t, uint32_t>()](const Row& row) mutable -> uint64_t {
        if (!row.tensor || !row.has_md5 || row.md5_text != 0) return 0;
        uint64_t ids = (uint64_t{row.shape} << 32) | row.dtype;
        auto [it, fresh] = cache.try_emplace(ids, 0u);
        if (fresh) {
          size_t h = std::hash<std::string>()(dump.Text(row.shape)) * 31 + std::hash<std::string>()(dump.Text(row.dtype));
          it->second = static_cast<uint32_t>(h ^ (h >> 32));
        }
        return (uint64_t{1} << 63) | (uint64_t{it->second & 0x7fffffffu} << 32) | row.md5;
      };
    };
    auto npu_key = keys(*table.npu);
    auto bench_key = keys(*table.bench);
    input.npu_value.reserve(table.rows.size());
    input.bench_value.reserve(table.rows.size());
    for (const CompareRow& r : table.rows) {
      input.npu_value.push_back(npu_key(table.NpuRow(r)));
      const Row* b = table.BenchRow(r);
      input.bench_value.push_back(b ? bench_key(*b) : 0);
    }
  }
  input.row_text = [&table](size_t i) {
    const CompareRow& r = table.rows[i];
    const Row& n = table.NpuRow(r);
    const Row* b = table.BenchRow(r);
    RowText t;
    t.name = table.npu->RowName(n);
    const bool value = !n.tensor && n.dtype != 0 && table.npu->Text(n.dtype).find("class") != std::string::npos;
    if (!b) {
      // An argument only the candidate passes (approximate="tanh" where the baseline takes
      // the default): its value, and that the baseline has none.
      if (value) t.candidate = table.NpuStat(r, 0);
      t.detail = r.dtype_gate_failed ? "no baseline counterpart: dtypes not compatible" : "no baseline counterpart";
      return t;
    }
    if (value) {
      t.candidate = table.NpuStat(r, 0);
      t.baseline = table.BenchStat(r, 0);
    }
    if (!table.SameText(n.dtype, b->dtype)) {
      t.detail = "dtype " + table.npu->Text(n.dtype) + " in the candidate, " + table.bench->Text(b->dtype) + " in the baseline";
    } else if (!table.SameText(n.shape, b->shape)) {
      t.detail = "shape " + table.npu->Text(n.shape) + " in the candidate, " + table.bench->Text(b->shape) + " in the baseline";
    }
    return t;
  };
  input.describe = [&table](size_t i) {
    const CompareRow& r = table.rows[i];
    const Row& n = table.NpuRow(r);
    const Row* b = table.BenchRow(r);
    json out;
    out["name"] = table.npu->RowName(n);
    out["bench_name"] = b ? json(table.bench->RowName(*b)) : json(nullptr);
    out["state"] = RowStateName(n.state);
    out["dtype"] = {{"candidate", table.npu->Text(n.dtype)}, {"baseline", b ? json(table.bench->Text(b->dtype)) : json(nullptr)}};
    out["shape"] = {{"candidate", table.npu->Text(n.shape)}, {"baseline", b ? json(table.bench->Text(b->shape)) : json(nullptr)}};
    if (table.mode == DumpMode::kMd5) {
      out["md5"] = {{"candidate", table.npu->Md5String(n)}, {"baseline", b ? json(table.bench->Md5String(*b)) : json(nullptr)}};
    }
    if (table.mode != DumpMode::kMd5 || n.stat_kind(0) == StatValue::Kind::kNumber) {
      static constexpr const char* kNames[4] = {"max", "min", "mean", "norm"};
      json stats = json::object();
      for (int s = 0; s < 4; ++s) {
        stats[kNames[s]] = {{"candidate", table.NpuStat(r, s)},
                            {"baseline", table.BenchStat(r, s)},
                            {"diff", table.DiffText(r, s, false)},
                            {"relative", table.DiffText(r, s, true)}};
      }
      out["stats"] = stats;
    }
    out["identical"] = table.Identical(r);
    out["result"] = LevelName(r.level);
    out["messages"] = table.Messages(r);
    if (r.dtype_gate_failed) out["unmatched_reason"] = "dtype gate: dtypes not compatible";
    else if (!b) out["unmatched_reason"] = "no bench data matched";
    return out;
  };
  return input;
}

}  // namespace parity::msprobe
