#include "domain/msprobe/first_diff.h"

#include <cmath>

#include "domain/msprobe/pyrepr.h"

namespace parity::msprobe {

using json = nlohmann::json;

const char* CriteriaModeName(DiffCriteria::Mode mode) {
  switch (mode) {
    case DiffCriteria::Mode::kMsprobe: return "msprobe";
    case DiffCriteria::Mode::kBitwise: return "bitwise";
    case DiffCriteria::Mode::kTolerance: return "tolerance";
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
    case DiffCriteria::Mode::kMsprobe: return row.level != Level::kPass;
    case DiffCriteria::Mode::kBitwise: return !row.identical;
    case DiffCriteria::Mode::kTolerance: return row.exceeds;
  }
  return !row.identical;
}

}  // namespace

FirstDiff FindFirstDiff(const DiffInput& input, const DiffCriteria& criteria, size_t max_next) {
  FirstDiff result;
  auto& counts = result.counts;
  counts.rows = input.rows.size();
  counts.entries = input.entries.size();
  std::vector<FirstDiff::Noise> pending_noise;
  std::vector<size_t> divergent, differing_inputs, differing_arguments, inputs, outputs;  // of one API
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
    bool any_difference = false, output_divergent = false, argument_differs = false, input_differs = false;
    bool any_matched = false;
    for (auto* list : {&divergent, &differing_inputs, &differing_arguments, &inputs, &outputs}) list->clear();
    for (size_t r = i; r < end; ++r) {
      const RowFacts& row = input.rows[r];
      if (row.matched) {
        ++counts.matched;
        any_matched = true;
      } else {
        ++counts.unmatched_npu;
      }
      if (row.identical) ++counts.identical_rows;
      if (!row.identical) any_difference = true;
      bool diverges = RowDiverges(row, criteria);
      if (diverges) ++counts.divergent_rows;
      (row.output ? outputs : inputs).push_back(r);
      if (row.output) {
        if (diverges) {
          output_divergent = true;
          divergent.push_back(r);
        }
      } else if (!row.tensor) {
        if (!row.matched || !row.identical) {
          argument_differs = true;
          differing_arguments.push_back(r);
          divergent.push_back(r);
        }
      } else if (!row.matched || !row.identical) {
        input_differs = true;
        differing_inputs.push_back(r);
        if (!row.matched) divergent.push_back(r);
      }
    }
    bool unmatched_rows = false;
    for (size_t r = i; r < end; ++r) unmatched_rows |= !input.rows[r].matched;
    bool entry_divergent = output_divergent || argument_differs || unmatched_rows;

    if (!ignored && any_difference && !result.first_any_difference) result.first_any_difference = entry;
    if (ignored) {
      ++counts.ignored_entries;
    } else if (entry_divergent) {
      ++counts.divergent_entries;
      if (!result.entry) {
        result.entry = entry;
        result.divergent_rows = divergent;
        result.differing_inputs = differing_inputs;
        result.differing_arguments = differing_arguments;
        result.input_rows = inputs;
        result.output_rows = outputs;
        result.noise = pending_noise;
        if (!any_matched) {
          result.verdict = "unmatched";
          result.explanation = std::string(name) + " has no counterpart in the baseline dump: the candidate calls something the "
                                      "baseline does not (a structural change)";
        } else if (input_differs) {
          result.verdict = "upstream";
          result.explanation = "inputs already differed: " + std::string(name) +
                               " received different tensors, so the divergence came from earlier code that msprobe "
                               "did not dump (not a hooked API, or a different dump level/scope)";
        } else {
          result.verdict = "operator";
          result.explanation = argument_differs && !output_divergent
                                   ? "tensor inputs equal, a non-tensor argument differs: the call of " + std::string(name) +
                                         " itself changed"
                                   : "inputs equal, output differs: " + std::string(name) + " itself" +
                                         (argument_differs ? " (called with different arguments)" : "") +
                                         " produced the divergence";
        }
      } else if (result.next_entries.size() < max_next) {
        result.next_entries.push_back(entry);
      }
    } else if (input_differs && !result.entry) {
      for (size_t r : differing_inputs) {
        pending_noise.push_back({entry, r, IsInPlaceApi(name) ? "inplace_input_crc" : "input_only"});
      }
    }
    i = end;
  }
  if (!result.entry) {
    result.noise = pending_noise;
    result.explanation = "no API diverges under the " + std::string(CriteriaModeName(criteria.mode)) + " criterion";
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
    input.rows.push_back(facts);
  }
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
    } else {
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
