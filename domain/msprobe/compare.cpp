#include "domain/msprobe/compare.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "domain/msprobe/pyrepr.h"

namespace parity::msprobe {

const char* LevelName(Level level) {
  switch (level) {
    case Level::kPass: return "pass";
    case Level::kWarning: return "warning";
    case Level::kError: return "error";
  }
  return "?";
}

namespace {

std::vector<std::string_view> SplitDots(std::string_view name) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t dot = name.find('.', start);
    parts.push_back(name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return parts;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string Join(const std::vector<std::string_view>& parts, size_t begin, size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    if (i > begin) out += '.';
    out += parts[i];
  }
  return out;
}

// msprobe's compare key per entry: the name, with a backward entry's call number replaced
// by how many backward calls of the same op came before it (recompute-safe matching);
// empty when msprobe would skip the entry (name not in forward/backward/parameters_grad form).
std::vector<std::string> EntryKeys(const Dump& dump) {
  std::vector<std::string> keys(dump.entries.size());
  std::unordered_map<std::string, int> backward_count;
  for (size_t i = 0; i < dump.entries.size(); ++i) {
    const std::string& name = dump.entries[i].name;
    auto parts = SplitDots(name);
    std::string_view last = parts.back();
    std::string_view second = parts.size() >= 2 ? parts[parts.size() - 2] : std::string_view();
    if (last == "parameters_grad" || second == "parameters_grad") {
      keys[i] = name;
      continue;
    }
    bool forward = last == "forward" || second == "forward";
    bool backward = last == "backward" || second == "backward";
    if (forward && backward) backward = false;  // msprobe tests forward first
    if (!forward && !backward) continue;
    if (parts.size() <= 2) continue;
    std::string op_no_number = Join(parts, 0, parts.size() - 2);
    if (forward) {
      keys[i] = name;
      continue;
    }
    int order = backward_count[op_no_number]++;
    std::string head(second), tail(last);
    if (AllDigits(head)) head = std::to_string(order);
    if (AllDigits(tail)) tail = std::to_string(order);
    keys[i] = op_no_number + "." + head + "." + tail;
  }
  return keys;
}

bool DtypeCompatible(const std::string& a, const std::string& b) {
  if (a == b) return true;
  auto in = [](const std::string& d, std::initializer_list<const char*> group) {
    for (const char* g : group) {
      if (d == g) return true;
    }
    return false;
  };
  return (in(a, {"Float16", "Float32", "BFloat16"}) && in(b, {"Float16", "Float32", "BFloat16"})) ||
         (in(a, {"torch.float16", "torch.float32", "torch.bfloat16"}) &&
          in(b, {"torch.float16", "torch.float32", "torch.bfloat16"}));
}

enum class ValType { kNum, kNan, kInf, kNegInf, kDevice, kNa, kOther };

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

ValType Classify(const std::string& s) {
  if (!s.empty() && ((s[0] >= '0' && s[0] <= '9') || s[0] == '.' || s[0] == '-' || s[0] == '+') &&
      s.find_first_of("iInN") == std::string::npos && PyParseFloat(s)) {
    return ValType::kNum;  // the common case, decided without lower-casing
  }
  if (EqualsIgnoreCase(s, "nan")) return ValType::kNan;
  if (EqualsIgnoreCase(s, "inf")) return ValType::kInf;
  if (EqualsIgnoreCase(s, "-inf")) return ValType::kNegInf;
  std::string lower = Lower(s);
  if (lower != "true" && lower != "false" && PyParseFloat(s)) return ValType::kNum;
  if (lower.find("npu") != std::string::npos || lower.find("cpu") != std::string::npos ||
      lower.find("cuda") != std::string::npos) {
    return ValType::kDevice;
  }
  if (s == "N/A") return ValType::kNa;
  return ValType::kOther;
}

// Python: percentage_str.strip('%') then float(...) / 100; 0 when that fails.
double Str2Float(const std::string& s) {
  std::string_view v = s;
  while (!v.empty() && v.front() == '%') v.remove_prefix(1);
  while (!v.empty() && v.back() == '%') v.remove_suffix(1);
  auto parsed = PyParseFloat(v);
  return parsed ? *parsed / 100 : 0;
}

bool IsInfOrNanText(const std::string& s) {
  std::string lower = Lower(s);
  size_t b = lower.find_first_not_of(" \t\n");
  size_t e = lower.find_last_not_of(" \t\n");
  if (b == std::string::npos) return false;
  lower = lower.substr(b, e - b + 1);
  return lower == "inf" || lower == "-inf" || lower == "nan";
}

// msprobe's is_inf_or_nan on a table cell, decided on the value without printing it.
bool InfOrNan(const Dump& dump, const StatValue& v) {
  if (v.kind == StatValue::Kind::kNumber) return std::isnan(v.number) || std::isinf(v.number);
  if (v.kind == StatValue::Kind::kText) return IsInfOrNanText(dump.Text(v.text));
  return false;
}

bool SameScalar(const Dump& a, const StatValue& x, const Dump& b, const StatValue& y) {
  if (x.kind == StatValue::Kind::kNumber && y.kind == StatValue::Kind::kNumber) return x.number == y.number;
  return a.StatString(x) == b.StatString(y);
}

}  // namespace

std::string RenameWithoutCounter(const std::string& op_name) {
  std::string process;
  if (op_name.find("forward") != std::string::npos) process = "forward";
  else if (op_name.find("backward") != std::string::npos) process = "backward";
  else return op_name;
  size_t at = op_name.find(process);
  std::string head = op_name.substr(0, at);
  size_t next = op_name.find(process, at + process.size());
  std::string in_out = op_name.substr(at + process.size(), next == std::string::npos ? std::string::npos
                                                                                     : next - at - process.size());
  // head.rsplit('.', 2)[0]
  std::string base = head;
  for (int i = 0; i < 2; ++i) {
    size_t dot = base.rfind('.');
    if (dot == std::string::npos) break;
    base = base.substr(0, dot);
  }
  return base + "." + process + in_out;
}

std::string EntryOfRowName(const std::string& op_name) {
  size_t pg = op_name.rfind(".parameters_grad.");
  if (pg != std::string::npos) {
    size_t counter_end = op_name.find('.', pg + 17);
    return op_name.substr(0, counter_end);
  }
  for (const char* dir : {".forward.", ".backward."}) {
    size_t at = op_name.rfind(dir);
    if (at == std::string::npos) continue;
    size_t after = at + std::string_view(dir).size();
    size_t dot = op_name.find('.', after);
    std::string_view token = std::string_view(op_name).substr(after, dot == std::string::npos ? std::string::npos : dot - after);
    if (AllDigits(token)) return op_name.substr(0, dot);  // module: ...forward.0
    return op_name.substr(0, after - 1);                  // api: ...N.forward
  }
  return op_name;
}

namespace {

bool IsNanText(const std::string& s) {
  return s.size() == 3 && (s[0] | 0x20) == 'n' && (s[1] | 0x20) == 'a' && (s[2] | 0x20) == 'n';
}

// msprobe's set_summary turns NaN (float or text) into "Nan".
std::string TableStat(const Dump& dump, const StatValue& v) {
  if (v.kind == StatValue::Kind::kNumber && std::isnan(v.number)) return "Nan";
  std::string s = dump.StatString(v);
  return IsNanText(s) ? "Nan" : s;
}

// Whether two statistics print the same in msprobe's table, without printing them.
bool SameStat(const Dump& a, const StatValue& x, const Dump& b, const StatValue& y) {
  if (x.kind != y.kind) {
    if (x.kind == StatValue::Kind::kNone || y.kind == StatValue::Kind::kNone) {
      const StatValue& text = x.kind == StatValue::Kind::kText ? x : y;
      const Dump& d = x.kind == StatValue::Kind::kText ? a : b;
      return text.kind == StatValue::Kind::kText && d.Text(text.text) == "None";
    }
    return TableStat(a, x) == TableStat(b, y);
  }
  switch (x.kind) {
    case StatValue::Kind::kNone: return true;
    case StatValue::Kind::kText: return a.Text(x.text) == b.Text(y.text);
    case StatValue::Kind::kNumber:
      if (std::isnan(x.number) || std::isnan(y.number)) return std::isnan(x.number) && std::isnan(y.number);
      return x.integral == y.integral && std::memcmp(&x.number, &y.number, sizeof(double)) == 0;
  }
  return false;
}

}  // namespace

std::string CompareTable::NpuStat(const CompareRow& r, int stat) const {
  return TableStat(*npu, NpuRow(r).stats[stat]);
}

std::string CompareTable::BenchStat(const CompareRow& r, int stat) const {
  const Row* b = BenchRow(r);
  if (!b) return "N/A";
  return TableStat(*bench, b->stats[stat]);
}

bool CompareTable::SameStatAt(const CompareRow& r, int stat) const {
  const Row* b = BenchRow(r);
  return b && SameStat(*npu, NpuRow(r).stats[stat], *bench, b->stats[stat]);
}

bool CompareTable::Identical(const CompareRow& r) const {
  const Row* b = BenchRow(r);
  if (!b) return false;
  const Row& n = NpuRow(r);
  if (npu->Text(n.dtype) != bench->Text(b->dtype) || npu->Text(n.shape) != bench->Text(b->shape)) return false;
  if (mode == DumpMode::kMd5) {
    if (n.md5_text == 0 && b->md5_text == 0) return n.has_md5 == b->has_md5 && n.md5 == b->md5;
    return npu->Md5String(n) == bench->Md5String(*b);
  }
  for (int i = 0; i < 4; ++i) {
    if (!SameStatAt(r, i)) return false;
  }
  return true;
}

std::string CompareTable::DiffText(const CompareRow& r, int stat, bool relative) const {
  if (!BenchRow(r)) return "N/A";
  if (SameStatAt(r, stat)) return "0";
  std::string a = NpuStat(r, stat), b = BenchStat(r, stat);
  if (a == b) return "0";
  ValType ta = Classify(a), tb = Classify(b);
  auto numeric = [](ValType t) { return t == ValType::kNum || t == ValType::kNan || t == ValType::kInf || t == ValType::kNegInf; };
  if (ta == ValType::kNa || tb == ValType::kNa) return "N/A";
  if (ta == ValType::kNum && tb == ValType::kNum) {
    // pandas.to_numeric, as msprobe parses the cells (see PandasToNumeric).
    auto px = PandasToNumeric(a), py = PandasToNumeric(b);
    double x = px ? *px : *PyParseFloat(a), y = py ? *py : *PyParseFloat(b);
    double diff = x - y;
    if (!relative) return PyFloatRepr(diff);
    if (y == 0) return "inf";
    return PyFloatRepr(std::fabs(diff / y * 100)) + "%";
  }
  if ((ta == ValType::kNan && numeric(tb)) || (tb == ValType::kNan && numeric(ta))) return "Nan";
  if (ta == ValType::kInf && (tb == ValType::kNum || tb == ValType::kNegInf)) return "inf";
  if (ta == ValType::kNegInf && (tb == ValType::kNum || tb == ValType::kInf)) return "-inf";
  if (ta == ValType::kNum && tb == ValType::kInf) return "-inf";
  if (ta == ValType::kNum && tb == ValType::kNegInf) return "inf";
  if (ta == ValType::kDevice && tb == ValType::kDevice) return "N/A";
  if (ta == ValType::kDevice || tb == ValType::kDevice || ta == ValType::kOther || tb == ValType::kOther) return "Diff";
  return "N/A";
}

std::vector<std::string> CompareTable::Messages(const CompareRow& r) const {
  static constexpr std::pair<uint16_t, const char*> kTexts[] = {
      {kInfNanError, "error: There is nan/inf/-inf in the maximum or minimum value of NPU."},
      {kRelativeError, "error: The NormRelativeErr of output is greater than 0.5."},
      {kRequiresGradError, "error: The Required_Grad of NPU and Bench are inconsistent"},
      {kScalarParameterError, "error: The scalar parameters of NPU and Bench are inconsistent."},
      {kDtypeError, "error: The dtype of NPU and Bench are inconsistent."},
      {kShapeError, "error: The shape of NPU and Bench are inconsistent."},
      {kRelativeWarning, "warning: The norm relative error of output is 10 times that of input."},
      {kCrc32Error, "error: The CRC-32 value of NPU differs from that of the bench."},
      {kCrc32Warning, "warning: The parameter of NPU does not match the bench."},
  };
  std::vector<std::string> out;
  for (auto [bit, text] : kTexts) {
    if (r.checks & bit) out.emplace_back(text);
  }
  return out;
}

namespace {

// msprobe 26 indicator_analysis: every checker of the mode, over the rows of one API.
class ApiChecker {
 public:
  ApiChecker(CompareTable& table, size_t begin, size_t end) : t_(table) {
    for (size_t i = begin; i < end; ++i) {
      const Row& row = t_.NpuRow(t_.rows[i]);
      // msprobe: ".output." anywhere in the row name (entry names can hold it too).
      const std::string& entry = t_.npu->entries[row.entry].name;
      bool output = row.suffix.find(".output.") != std::string::npos ||
                    entry.find(".output.") != std::string::npos ||
                    (entry.size() >= 7 && entry.compare(entry.size() - 7, 7, ".output") == 0 && !row.suffix.empty());
      (output ? outputs_ : inputs_).push_back(&t_.rows[i]);
    }
  }

  void Run() {
    enum class Ignore { kNone, kInput, kAll } ignore = Ignore::kNone;
    if (!inputs_.empty()) {
      auto parts = SplitDots(t_.npu->RowName(t_.NpuRow(*inputs_.front())));
      if (parts.size() >= 2) {
        static const std::vector<std::string_view> kAll = {"empty", "empty_like", "numpy", "to", "__setitem__",
                                                           "empty_with_format", "new_empty_strided", "new_empty",
                                                           "empty_strided"};
        static const std::vector<std::string_view> kInput = {"_reduce_scatter_base", "_all_gather_base",
                                                             "all_to_all_single", "batch_isend_irecv"};
        for (auto n : kAll) {
          if (parts[1] == n) ignore = Ignore::kAll;
        }
        for (auto n : kInput) {
          if (parts[1] == n) ignore = Ignore::kInput;
        }
      }
    }
    std::vector<CompareRow*> checked;
    if (ignore == Ignore::kNone) {
      checked = inputs_;
      checked.insert(checked.end(), outputs_.begin(), outputs_.end());
    } else if (ignore == Ignore::kInput) {
      checked = outputs_;
    }
    bool relative_rules = ignore == Ignore::kNone;

    if (t_.mode == DumpMode::kMd5) {
      for (CompareRow* r : checked) {
        std::string a = t_.npu->Md5String(t_.NpuRow(*r));
        std::string b = t_.BenchRow(*r) ? t_.bench->Md5String(*t_.BenchRow(*r)) : "N/A";
        if (a == b) continue;
        bool missing = a == "N/A" || a == "Nan" || a.empty() || b == "N/A" || b == "Nan" || b.empty();
        Mark(*r, missing ? Level::kWarning : Level::kError, missing ? kCrc32Warning : kCrc32Error);
      }
      return;
    }

    for (CompareRow* r : checked) {  // InfNanErrChecker
      const Row* b = t_.BenchRow(*r);
      if (b && (InfOrNan(*t_.bench, b->stats[0]) || InfOrNan(*t_.bench, b->stats[1]))) continue;
      const Row& n = t_.NpuRow(*r);
      if (InfOrNan(*t_.npu, n.stats[0]) || InfOrNan(*t_.npu, n.stats[1])) Mark(*r, Level::kError, kInfNanError);
    }
    if (t_.mode == DumpMode::kSummary && relative_rules) {  // RelativeErrChecker
      double in_max = std::fabs(MaxPercent(inputs_));
      if (in_max < 0.1) {
        for (CompareRow* r : outputs_) {
          if (std::fabs(Str2Float(NormRelative(r))) > 0.5) Mark(*r, Level::kError, kRelativeError);
        }
      }
    }
    for (CompareRow* r : checked) {  // RequiresGradErrChecker
      const Row* b = t_.BenchRow(*r);
      if (!b) continue;
      if (t_.npu->RequiresGradString(t_.NpuRow(*r)) != t_.bench->RequiresGradString(*b)) {
        Mark(*r, Level::kError, kRequiresGradError);
      }
    }
    if (relative_rules) {  // ParametersErrChecker
      for (CompareRow* r : inputs_) {
        const Row* b = t_.BenchRow(*r);
        if (!b) continue;
        const Row& n = t_.NpuRow(*r);
        const std::string& nd = t_.npu->Text(n.dtype);
        const std::string& bd = t_.bench->Text(b->dtype);
        if (nd.find("class") == std::string::npos || bd.find("class") == std::string::npos) continue;
        if (t_.npu->Text(n.shape) != "[]") continue;
        if (!SameScalar(*t_.npu, n.stats[0], *t_.bench, b->stats[0])) Mark(*r, Level::kError, kScalarParameterError);
      }
    }
    for (CompareRow* r : checked) {  // DTypeErrChecker
      const Row* b = t_.BenchRow(*r);
      if (!b) continue;
      std::string bench_name = t_.bench->RowName(*b);
      if (bench_name.find("qkv") != std::string::npos || bench_name.find("gate_up") != std::string::npos) continue;
      if (t_.npu->Text(t_.NpuRow(*r).dtype) != t_.bench->Text(b->dtype)) Mark(*r, Level::kError, kDtypeError);
    }
    for (CompareRow* r : checked) {  // ShapeErrChecker
      const Row* b = t_.BenchRow(*r);
      if (!b) continue;
      if (t_.npu->Text(t_.NpuRow(*r).shape) != t_.bench->Text(b->shape)) Mark(*r, Level::kError, kShapeError);
    }
    if (t_.mode == DumpMode::kSummary && relative_rules && !outputs_.empty()) {  // RelativeWarnChecker
      double in_max = std::fabs(MaxPercent(inputs_));
      double out_max = std::fabs(MaxPercent(outputs_));
      bool warn = in_max == 0 ? out_max > 0.1 : out_max / in_max > 10;
      if (warn) Mark(*outputs_.front(), Level::kWarning, kRelativeWarning);
    }
  }

 private:
  const std::string& NormRelative(CompareRow* r) {
    auto it = norm_relative_.find(r);
    if (it == norm_relative_.end()) it = norm_relative_.emplace(r, t_.DiffText(*r, 3, true)).first;
    return it->second;
  }

  // ApiData.get_min_or_max_value(NormRelativeErr, is_min=False): only "...%" cells count.
  double MaxPercent(const std::vector<CompareRow*>& rows) {
    double best = 0.0;
    for (CompareRow* r : rows) {
      const std::string& v = NormRelative(r);
      if (v.empty() || v.back() != '%') continue;
      double x = Str2Float(v);
      if (std::isnan(x)) continue;  // Python max(0.0, nan) keeps 0.0
      best = std::max(best, x);
    }
    return best;
  }

  void Mark(CompareRow& r, Level level, uint16_t bit) {
    if (level > r.level) r.level = level;
    r.checks |= bit;
  }

  CompareTable& t_;
  std::vector<CompareRow*> inputs_, outputs_;
  std::unordered_map<CompareRow*, std::string> norm_relative_;
};

}  // namespace

Result<CompareTable> Compare(const Dump& npu, const Dump& bench, const CompareOptions& options) {
  if (npu.task != bench.task || npu.mode != bench.mode) {
    return InvalidArgument("the two dumps were taken in different modes: " + npu.path.string() + " is " +
                           DumpModeName(npu.mode) + " (task " + npu.task + "), " + bench.path.string() + " is " +
                           DumpModeName(bench.mode) + " (task " + bench.task + ")")
        .WithHint("dump both runs with the same msprobe config (task and summary_mode)");
  }
  CompareTable table;
  table.mode = npu.mode;
  table.npu = &npu;
  table.bench = &bench;

  std::vector<std::string> npu_keys = EntryKeys(npu);
  std::vector<std::string> bench_keys = EntryKeys(bench);
  auto fuzzy_key = [](const std::vector<std::string>& keys, size_t i, std::unordered_map<std::string, int>& seen) {
    std::string base = RenameWithoutCounter(keys[i]);
    return base + "#" + std::to_string(seen[base]++);
  };
  std::unordered_map<std::string, uint32_t> bench_entry;
  bench_entry.reserve(bench.entries.size());
  {
    std::unordered_map<std::string, int> seen;
    for (size_t i = 0; i < bench.entries.size(); ++i) {
      if (bench_keys[i].empty()) continue;
      std::string key = options.fuzzy ? fuzzy_key(bench_keys, i, seen) : bench_keys[i];
      bench_entry.emplace(std::move(key), static_cast<uint32_t>(i));
    }
  }
  std::vector<uint8_t> bench_used(bench.rows.size(), 0);
  std::unordered_map<std::string, int> npu_seen;
  table.rows.reserve(npu.rows.size());
  for (size_t e = 0; e < npu.entries.size(); ++e) {
    if (npu_keys[e].empty()) continue;
    const Entry& entry = npu.entries[e];
    std::string key = options.fuzzy ? fuzzy_key(npu_keys, e, npu_seen) : npu_keys[e];
    auto found = bench_entry.find(key);
    const Entry* bench_e = found == bench_entry.end() ? nullptr : &bench.entries[found->second];
    size_t begin = table.rows.size();
    for (uint32_t i = entry.first_row; i < entry.first_row + entry.row_count; ++i) {
      const Row& row = npu.rows[i];
      CompareRow out;
      out.npu = i;
      if (bench_e) {
        for (uint32_t j = bench_e->first_row; j < bench_e->first_row + bench_e->row_count; ++j) {
          const Row& b = bench.rows[j];
          if (bench_used[j] || b.suffix != row.suffix) continue;
          if (options.require_same_shape && bench.Text(b.shape) != npu.Text(row.shape)) continue;
          out.bench = j;
          bench_used[j] = 1;
          break;
        }
      }
      if (out.bench >= 0 && !DtypeCompatible(npu.Text(row.dtype), bench.Text(bench.rows[out.bench].dtype))) {
        out.bench = -1;
        out.dtype_gate_failed = true;
      }
      out.requires_grad_consistent =
          npu.RequiresGradString(row) == (out.bench >= 0 ? bench.RequiresGradString(bench.rows[out.bench]) : "N/A");
      table.rows.push_back(out);
    }
    ApiChecker(table, begin, table.rows.size()).Run();
  }
  for (uint8_t used : bench_used) table.bench_rows_unmatched += used ? 0 : 1;
  return table;
}

}  // namespace parity::msprobe
