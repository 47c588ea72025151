#include "domain/msprobe/module_heat.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace parity::msprobe {

namespace {

bool IsModuleForward(std::string_view name) {
  return name.rfind("Module.", 0) == 0 && name.find(".forward") != std::string_view::npos;
}

// "Module.layers.0.ffn.FFN.forward.3" -> "layers.0.ffn.FFN" (the call counter and the
// direction dropped: every call of the module is one row).
std::string ModuleKey(std::string_view name) {
  std::string_view s = name.substr(7);
  for (std::string_view tail : {".forward", ".backward", ".parameters_grad"}) {
    size_t at = s.rfind(tail);
    if (at != std::string_view::npos) return std::string(s.substr(0, at));
  }
  return std::string(s);
}

// The call site of an entry's stack; stacks shared by many entries (msprobe 26 groups them)
// are parsed once.
using SiteCache = std::unordered_map<const std::vector<std::string>*, std::string>;

std::string CallSiteOf(const std::vector<std::string>& frames, const std::vector<std::string>& user_code) {
  for (const std::string& raw : frames) {
    auto frame = ParseFrame(raw);
    if (!frame || !IsUserFrame(*frame, user_code)) continue;
    size_t slash = frame->file.rfind('/');
    return frame->file.substr(slash == std::string::npos ? 0 : slash + 1) + ":" + std::to_string(frame->line) + " " +
           frame->function;
  }
  return "";
}

const std::string& CallSiteKey(std::string_view entry, const StackIndex* stacks, const std::vector<std::string>& user_code,
                               SiteCache& cache) {
  static const std::string kNone;
  const std::vector<std::string>* frames = stacks ? stacks->Find(entry) : nullptr;
  if (!frames) return kNone;
  auto [it, fresh] = cache.try_emplace(frames);
  if (fresh) it->second = CallSiteOf(*frames, user_code);
  return it->second;
}

double RowDifference(const CompareTable& table, const CompareRow& r) {
  const Row* b = table.BenchRow(r);
  if (!b) return 1;
  if (table.Identical(r)) return 0;
  const Row& n = table.NpuRow(r);
  if (table.mode == DumpMode::kMd5 || !table.SameText(n.dtype, b->dtype) || !table.SameText(n.shape, b->shape)) {
    return 1;
  }
  // Max, Min and Mean against the tensor's range (max |Max|, |Min| of both sides), Norm
  // against the larger norm: the largest of the four.
  auto number = [](const Row& row, int s) -> std::optional<double> {
    if (row.stat_kind(s) != StatValue::Kind::kNumber) return std::nullopt;
    return row.values[s];
  };
  double range = 0, largest = -1;
  for (const Row* side : {&n, b}) {
    for (int s : {0, 1}) {
      if (auto v = number(*side, s); v && std::isfinite(*v)) range = std::max(range, std::fabs(*v));
    }
  }
  for (int s = 0; s < 4; ++s) {
    auto x = number(n, s), y = number(*b, s);
    if (!x || !y) continue;
    if (!std::isfinite(*x) || !std::isfinite(*y)) {
      largest = std::max(largest, *x == *y || (std::isnan(*x) && std::isnan(*y)) ? 0.0 : 1.0);
      continue;
    }
    double scale = s == 3 ? std::max(std::fabs(*x), std::fabs(*y)) : range;
    largest = std::max(largest, scale == 0 ? 0.0 : std::min(1.0, std::fabs(*x - *y) / scale));
  }
  if (largest >= 0) return largest;
  return 1;  // differs, and no number to say by how much
}

}  // namespace

HeatColumn LayerHeat(const CompareTable& table, const StackIndex* stacks, const std::vector<std::string>& user_code,
                     const std::unordered_map<std::string, std::string>& parents, std::string_view first_entry) {
  HeatColumn column;
  const Dump& npu = *table.npu;
  bool modules = false;
  for (size_t e = 0; e < npu.entries.size() && !modules; ++e) modules = IsModuleForward(npu.entries[e].name);
  column.kind = modules ? "module" : "call_site";
  std::unordered_map<std::string, size_t> index, calls;  // row by key; call_site: calls per line so far
  SiteCache sites;
  uint32_t entry = UINT32_MAX;
  HeatRow* current = nullptr;
  bool backward = false;  // call_site: past the forward pass (the optimizer's APIs are no layer)
  for (const CompareRow& r : table.rows) {
    const Row& n = table.NpuRow(r);
    if (n.entry != entry) {
      entry = n.entry;
      std::string_view name = npu.entries[entry].name;
      backward |= name.find(".backward") != std::string_view::npos;
      std::string key;
      if (modules && IsModuleForward(name)) {
        key = ModuleKey(name);
      } else if (!modules && !backward && name.find(".forward") != std::string_view::npos) {
        key = CallSiteKey(name, stacks, user_code, sites);
        if (!key.empty()) key += " #" + std::to_string(++calls[key]);
      }
      if (!modules && name == first_entry) column.first_key = key;
      current = nullptr;
      if (!key.empty()) {
        auto [it, fresh] = index.try_emplace(key, column.rows.size());
        if (fresh) column.rows.push_back({key, 0, false});
        current = &column.rows[it->second];
      }
    }
    if (!current || n.state != RowState::kOutput) continue;
    current->value = std::max(current->value, RowDifference(table, r));
    current->differs |= !table.Identical(r);
  }
  if (modules && !first_entry.empty()) {
    std::string at(first_entry);
    for (int depth = 0; depth < 64; ++depth) {
      if (at.rfind("Module.", 0) == 0) {
        column.first_key = ModuleKey(at);
        break;
      }
      auto it = parents.find(at);
      if (it == parents.end() || it->second.empty()) break;
      at = it->second;
    }
  }
  return column;
}

nlohmann::json HeatmapJson(const std::vector<HeatPair>& pairs, std::optional<size_t> first_pair) {
  using json = nlohmann::json;
  json rows = json::array(), columns = json::array(), values = json::array();
  std::unordered_map<std::string, size_t> row_of;
  bool one_step = true, one_rank = true;
  for (const HeatPair& p : pairs) {
    one_step &= p.step == pairs.front().step;
    one_rank &= p.rank == pairs.front().rank;
    for (const HeatRow& h : p.column.rows) {
      if (row_of.emplace(h.key, rows.size()).second) rows.push_back(h.key);
    }
  }
  for (size_t r = 0; r < rows.size(); ++r) values.push_back(json::array());
  auto name = [](const char* what, const std::optional<int>& n) { return n ? what + std::to_string(*n) : std::string(); };
  for (const HeatPair& p : pairs) {
    std::string step = name("step", p.step), rank = name("rank", p.rank);
    std::string label = one_rank && !step.empty() ? step
                        : one_step && !rank.empty() ? rank
                                                    : step + (step.empty() || rank.empty() ? "" : "/") + rank;
    columns.push_back({{"step", p.step ? json(*p.step) : json(nullptr)},
                       {"rank", p.rank ? json(*p.rank) : json(nullptr)},
                       {"label", label}});
    std::vector<json> column(rows.size(), json(nullptr));
    for (const HeatRow& h : p.column.rows) column[row_of[h.key]] = h.value;
    for (size_t r = 0; r < rows.size(); ++r) values[r].push_back(column[r]);
  }
  json first_cell = nullptr;
  if (first_pair && *first_pair < pairs.size()) {
    auto it = row_of.find(pairs[*first_pair].column.first_key);
    if (it != row_of.end()) first_cell = {{"row", it->second}, {"column", *first_pair}};
  }
  return {{"kind", pairs.empty() ? "module" : pairs.front().column.kind},
          {"value", "largest relative difference of the layer's forward outputs, from msprobe's statistics (Max, Min, "
                    "Mean over the tensor's range, Norm over the larger norm), in [0, 1]"},
          {"rows", rows},
          {"columns", columns},
          {"values", values},
          {"first_cell", first_cell}};
}

}  // namespace parity::msprobe
