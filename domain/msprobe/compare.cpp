#include "domain/msprobe/compare.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
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

// Entry key -> index of the first bench entry with that key: open addressing over one array
// (a node-based map allocated a node per entry of the dump, about a million for 1 GiB).
class FirstEntryIndex {
 public:
  FirstEntryIndex(const std::vector<std::string_view>& keys, size_t count) : keys_(keys) {
    size_t capacity = 16;
    while (capacity < count * 2) capacity *= 2;
    slots_.assign(capacity, kEmpty);
  }
  // Adds entry i under keys_[i]; false if an earlier entry has that key (it stays the one found).
  bool Insert(uint32_t i) {
    for (size_t s = Home(keys_[i]);; s = (s + 1) & (slots_.size() - 1)) {
      if (slots_[s] == kEmpty) {
        slots_[s] = i;
        return true;
      }
      if (keys_[slots_[s]] == keys_[i]) return false;
    }
  }
  std::optional<uint32_t> Find(std::string_view key) const {
    for (size_t s = Home(key);; s = (s + 1) & (slots_.size() - 1)) {
      if (slots_[s] == kEmpty) return std::nullopt;
      if (keys_[slots_[s]] == key) return slots_[s];
    }
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  size_t Home(std::string_view key) const { return std::hash<std::string_view>()(key) & (slots_.size() - 1); }
  const std::vector<std::string_view>& keys_;
  std::vector<uint32_t> slots_;
};

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// msprobe's compare key per entry: the name, with a backward entry's call number replaced
// by how many backward calls of the same op came before it (recompute-safe matching);
// empty when msprobe would skip the entry (name not in forward/backward/parameters_grad form).
// Rewritten keys live in `owned`.
std::vector<std::string_view> EntryKeys(const Dump& dump, TextArena& owned) {
  std::vector<std::string_view> keys(dump.entries.size());
  std::unordered_map<std::string_view, int> backward_count;
  std::string rewritten;  // one buffer for every rewritten key (no string per entry)
  for (size_t i = 0; i < dump.entries.size(); ++i) {
    std::string_view name = dump.entries[i].name;
    size_t last_dot = name.rfind('.');
    std::string_view last = last_dot == std::string_view::npos ? name : name.substr(last_dot + 1);
    size_t prev_dot = last_dot == std::string_view::npos || last_dot == 0 ? std::string_view::npos
                                                                          : name.rfind('.', last_dot - 1);
    std::string_view second;
    if (last_dot != std::string_view::npos) {
      size_t from = prev_dot == std::string_view::npos ? 0 : prev_dot + 1;
      second = name.substr(from, last_dot - from);
    }
    if (last == "parameters_grad" || second == "parameters_grad") {
      keys[i] = name;
      continue;
    }
    bool forward = last == "forward" || second == "forward";
    bool backward = last == "backward" || second == "backward";
    if (forward && backward) backward = false;  // msprobe tests forward first
    if (!forward && !backward) continue;
    if (prev_dot == std::string_view::npos) continue;  // two parts or fewer
    if (forward) {
      keys[i] = name;
      continue;
    }
    std::string_view op_no_number = name.substr(0, prev_dot);
    int order = backward_count[op_no_number]++;
    char digits[16];
    std::string_view number(digits, static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, order).ptr - digits));
    rewritten.assign(op_no_number);
    rewritten += '.';
    rewritten += AllDigits(second) ? number : second;
    rewritten += '.';
    rewritten += AllDigits(last) ? number : last;
    keys[i] = owned.Add(rewritten);
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
bool SameStat(const CompareTable& t, const StatValue& x, const StatValue& y) {
  if (x.kind != y.kind) {
    if (x.kind == StatValue::Kind::kNone || y.kind == StatValue::Kind::kNone) {
      const StatValue& text = x.kind == StatValue::Kind::kText ? x : y;
      const Dump& d = x.kind == StatValue::Kind::kText ? *t.npu : *t.bench;
      return text.kind == StatValue::Kind::kText && d.Text(text.text) == "None";
    }
    return TableStat(*t.npu, x) == TableStat(*t.bench, y);
  }
  switch (x.kind) {
    case StatValue::Kind::kNone: return true;
    case StatValue::Kind::kText: return t.SameText(x.text, y.text);
    case StatValue::Kind::kNumber:
      if (std::isnan(x.number) || std::isnan(y.number)) return std::isnan(x.number) && std::isnan(y.number);
      return x.integral == y.integral && std::memcmp(&x.number, &y.number, sizeof(double)) == 0;
  }
  return false;
}

}  // namespace

size_t NumberText(const StatValue& v, char (&buf)[kPyFloatReprMax]) {
  if (v.integral && std::abs(v.number) < 9.007199254740992e15) {
    auto [end, ec] = std::to_chars(buf, buf + kPyFloatReprMax, static_cast<long long>(v.number));
    return static_cast<size_t>(end - buf);
  }
  return PyFloatReprInto(v.number, buf);
}

std::string CompareTable::NpuStat(const CompareRow& r, int stat) const {
  return TableStat(*npu, NpuRow(r).stat(stat));
}

std::string CompareTable::BenchStat(const CompareRow& r, int stat) const {
  const Row* b = BenchRow(r);
  if (!b) return "N/A";
  return TableStat(*bench, b->stat(stat));
}

bool CompareTable::SameStatAt(const CompareRow& r, int stat) const {
  const Row* b = BenchRow(r);
  if (!b) return false;
  const Row& n = NpuRow(r);
  // The same kind and integral bit and the same value bits print the same (texts by id
  // only within one pool): most matched rows are decided here without building StatValues.
  if ((((n.stat_bits ^ b->stat_bits) >> (3 * stat)) & 7u) == 0 &&
      std::memcmp(&n.values[stat], &b->values[stat], sizeof(double)) == 0 &&
      (shared_pool || n.stat_kind(stat) != StatValue::Kind::kText)) {
    return true;
  }
  return SameStat(*this, n.stat(stat), b->stat(stat));
}

bool CompareTable::Identical(const CompareRow& r) const {
  const Row* b = BenchRow(r);
  if (!b) return false;
  const Row& n = NpuRow(r);
  if (!SameText(n.dtype, b->dtype) || !SameText(n.shape, b->shape)) return false;
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
  const Row* bench_row = BenchRow(r);
  if (!bench_row) return "N/A";
  if (SameStatAt(r, stat)) return "0";
  StatValue x = NpuRow(r).stat(stat), y = bench_row->stat(stat);
  if (x.kind == StatValue::Kind::kNumber && y.kind == StatValue::Kind::kNumber && std::isfinite(x.number) &&
      std::isfinite(y.number)) {
    char xa[kPyFloatReprMax], yb[kPyFloatReprMax];
    std::string abs, rel;
    NumberDiffTexts(x.number, std::string_view(xa, NumberText(x, xa)), y.number,
                    std::string_view(yb, NumberText(y, yb)), relative ? nullptr : &abs, relative ? &rel : nullptr);
    return relative ? rel : abs;
  }
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

void NumberDiffTexts(double x, std::string_view xs, double y, std::string_view ys, std::string* abs,
                     std::string* rel) {
  // DiffText's general path for two number cells, without building them as strings.
  if (xs == ys) {
    if (abs) *abs = "0";
    if (rel) *rel = "0";
    return;
  }
  auto px = PandasToNumeric(xs), py = PandasToNumeric(ys);
  double xv = px ? *px : x, yv = py ? *py : y;
  char buf[kPyFloatReprMax];
  if (abs) abs->assign(buf, PyFloatReprInto(xv - yv, buf));
  if (rel) {
    if (yv == 0) {
      *rel = "inf";
    } else {
      rel->assign(buf, PyFloatReprInto(std::fabs((xv - yv) / yv * 100), buf));
      *rel += '%';
    }
  }
}

CompareTable::RelativeValue CompareTable::NormRelative(const CompareRow& r) const {
  const Row* b = BenchRow(r);
  if (!b || SameStatAt(r, 3)) return {};  // "N/A" or "0"
  StatValue x = NpuRow(r).stat(3), y = b->stat(3);
  if (x.kind == StatValue::Kind::kNumber && y.kind == StatValue::Kind::kNumber && std::isfinite(x.number) &&
      std::isfinite(y.number)) {
    // DiffText's arithmetic on the cells' text, without building strings: the "%" cell
    // is repr(v) + "%", and float(repr(v)) == v, so Str2Float gives v / 100 exactly.
    char xa[kPyFloatReprMax], yb[kPyFloatReprMax];
    std::string_view xs(xa, NumberText(x, xa)), ys(yb, NumberText(y, yb));
    if (xs == ys) return {};  // "0"
    auto px = PandasToNumeric(xs), py = PandasToNumeric(ys);
    double xv = px ? *px : x.number, yv = py ? *py : y.number;
    if (yv == 0) return {INFINITY, false};  // "inf"
    return {std::fabs((xv - yv) / yv * 100) / 100, true};
  }
  std::string text = DiffText(r, 3, true);
  return {Str2Float(text), !text.empty() && text.back() == '%'};
}

std::optional<CompareTable::RelativeBounds> CompareTable::NormRelativeBounds(const CompareRow& r) const {
  const Row* b = BenchRow(r);
  if (!b || SameStatAt(r, 3)) return std::nullopt;  // exact and cheap: "N/A" or "0"
  const Row& n = NpuRow(r);
  if (n.stat_kind(3) != StatValue::Kind::kNumber || b->stat_kind(3) != StatValue::Kind::kNumber) return std::nullopt;
  const double x = n.values[3], y = b->values[3];
  // Far from 0 and from the double range's ends, pandas' parse of a number's cell neither
  // underflows nor overflows, and is within 1e-12 of the number (its cell keeps at least 13
  // significant digits: "0.000" + 17 digits loses 4 to the 17-digit limit; then a few
  // roundings). kSlack bounds that tenfold, and the arithmetic's own rounding.
  constexpr double kMin = 1e-280, kMax = 1e280, kSlack = 1e-11;
  const double ax = std::fabs(x), ay = std::fabs(y);
  if (!(ax >= kMin && ax <= kMax && ay >= kMin && ay <= kMax)) return std::nullopt;  // NaN, inf, 0 included
  const double diff = std::fabs(x - y), err = kSlack * (ax + ay);
  return RelativeBounds{std::max(0.0, diff - err) / (ay * (1 + kSlack)) * (1 - kSlack),
                        (diff + err) / (ay * (1 - kSlack)) * (1 + kSlack)};
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

// The second dot-separated part of entry + suffix (msprobe's API name: "gelu" in
// "Functional.gelu.0.forward.input.0"); suffixes are empty or start with '.'.
std::optional<std::string_view> ApiPart(std::string_view entry, std::string_view suffix) {
  size_t d1 = entry.find('.');
  if (d1 != std::string_view::npos) {
    size_t d2 = entry.find('.', d1 + 1);
    return entry.substr(d1 + 1, d2 == std::string_view::npos ? std::string_view::npos : d2 - d1 - 1);
  }
  if (suffix.empty()) return std::nullopt;
  std::string_view rest = suffix.substr(1);
  return rest.substr(0, rest.find('.'));
}

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// msprobe 26 indicator_analysis: every checker of the mode, over the rows of one API. One
// checker serves every API of a table (its buffers are reused).
class ApiChecker {
 public:
  explicit ApiChecker(CompareTable& table) : t_(table) {}

  void Run(size_t begin, size_t end) {
    inputs_.clear();
    outputs_.clear();
    relative_.clear();
    if (begin == end) return;
    std::string_view entry = t_.npu->entries[t_.NpuRow(t_.rows[begin]).entry].name;
    bool entry_output = entry.find(".output.") != std::string_view::npos;
    bool entry_ends_output = EndsWith(entry, ".output");
    for (size_t i = begin; i < end; ++i) {
      const Row& row = t_.NpuRow(t_.rows[i]);
      // msprobe: ".output." anywhere in the row name (entry names can hold it too).
      bool output = entry_output || SuffixIsOutput(row.suffix) || (entry_ends_output && row.suffix != 0);
      (output ? outputs_ : inputs_).push_back(i);
    }
    begin_ = begin;
    relative_.assign(end - begin, Estimate{});

    enum class Ignore { kNone, kInput, kAll } ignore = Ignore::kNone;
    if (!inputs_.empty()) {
      const Row& first = t_.NpuRow(t_.rows[inputs_.front()]);
      if (auto api = ApiPart(entry, t_.npu->Text(first.suffix))) {
        static const std::string_view kAll[] = {"empty", "empty_like", "numpy", "to", "__setitem__",
                                                "empty_with_format", "new_empty_strided", "new_empty",
                                                "empty_strided"};
        static const std::string_view kInput[] = {"_reduce_scatter_base", "_all_gather_base", "all_to_all_single",
                                                  "batch_isend_irecv"};
        for (auto n : kAll) {
          if (*api == n) ignore = Ignore::kAll;
        }
        for (auto n : kInput) {
          if (*api == n) ignore = Ignore::kInput;
        }
      }
    }
    checked_.clear();
    if (ignore == Ignore::kNone) {
      checked_ = inputs_;
      checked_.insert(checked_.end(), outputs_.begin(), outputs_.end());
    } else if (ignore == Ignore::kInput) {
      checked_ = outputs_;
    }
    bool relative_rules = ignore == Ignore::kNone;

    if (t_.mode == DumpMode::kMd5) {
      for (size_t i : checked_) {
        CompareRow& r = t_.rows[i];
        const Row& n = t_.NpuRow(r);
        const Row* b = t_.BenchRow(r);
        if (b && n.md5_text == 0 && b->md5_text == 0 && n.has_md5 && b->has_md5 && n.md5 == b->md5) continue;
        std::string x = t_.npu->Md5String(n);
        std::string y = b ? t_.bench->Md5String(*b) : "N/A";
        if (x == y) continue;
        bool missing = x == "N/A" || x == "Nan" || x.empty() || y == "N/A" || y == "Nan" || y.empty();
        Mark(r, missing ? Level::kWarning : Level::kError, missing ? kCrc32Warning : kCrc32Error);
      }
      return;
    }

    for (size_t i : checked_) {  // InfNanErrChecker
      CompareRow& r = t_.rows[i];
      const Row* b = t_.BenchRow(r);
      if (b && (InfOrNan(*t_.bench, b->stat(0)) || InfOrNan(*t_.bench, b->stat(1)))) continue;
      const Row& n = t_.NpuRow(r);
      if (InfOrNan(*t_.npu, n.stat(0)) || InfOrNan(*t_.npu, n.stat(1))) Mark(r, Level::kError, kInfNanError);
    }
    if (t_.mode == DumpMode::kSummary && relative_rules) {  // RelativeErrChecker
      // in_max = |max NormRelativeErr of the inputs|; values are >= 0, so bounds of the max bound it.
      bool inputs_small = Decide(inputs_, [](Range in) -> std::optional<bool> {
        if (in.hi < 0.1) return true;
        if (in.lo >= 0.1) return false;
        return std::nullopt;
      });
      if (inputs_small) {
        for (size_t i : outputs_) {
          if (OutputAbove(i, 0.5)) Mark(t_.rows[i], Level::kError, kRelativeError);
        }
      }
    }
    for (size_t i : checked_) {  // RequiresGradErrChecker
      CompareRow& r = t_.rows[i];
      const Row* b = t_.BenchRow(r);
      if (b && t_.NpuRow(r).requires_grad != b->requires_grad) Mark(r, Level::kError, kRequiresGradError);
    }
    if (relative_rules) {  // ParametersErrChecker
      for (size_t i : inputs_) {
        CompareRow& r = t_.rows[i];
        const Row* b = t_.BenchRow(r);
        if (!b) continue;
        const Row& n = t_.NpuRow(r);
        if (!npu_class_.Get(n.dtype, *t_.npu) || !bench_class_.Get(b->dtype, *t_.bench)) continue;
        if (t_.npu->Text(n.shape) != "[]") continue;
        if (!SameScalar(*t_.npu, n.stat(0), *t_.bench, b->stat(0))) Mark(r, Level::kError, kScalarParameterError);
      }
    }
    for (size_t i : checked_) {  // DTypeErrChecker
      CompareRow& r = t_.rows[i];
      const Row* b = t_.BenchRow(r);
      if (!b) continue;
      if (t_.SameText(t_.NpuRow(r).dtype, b->dtype)) continue;
      // The bench row name holds "qkv" / "gate_up": its entry or its suffix does (neither
      // pattern holds a '.', and suffixes start with one).
      std::string_view bench_entry = t_.bench->entries[b->entry].name;
      const std::string& bench_suffix = t_.bench->Text(b->suffix);
      bool fused = bench_entry.find("qkv") != std::string_view::npos ||
                   bench_entry.find("gate_up") != std::string_view::npos ||
                   bench_suffix.find("qkv") != std::string::npos || bench_suffix.find("gate_up") != std::string::npos;
      if (!fused) Mark(r, Level::kError, kDtypeError);
    }
    for (size_t i : checked_) {  // ShapeErrChecker
      CompareRow& r = t_.rows[i];
      const Row* b = t_.BenchRow(r);
      if (b && !t_.SameText(t_.NpuRow(r).shape, b->shape)) Mark(r, Level::kError, kShapeError);
    }
    if (t_.mode == DumpMode::kSummary && relative_rules && !outputs_.empty()) {  // RelativeWarnChecker
      // warn = in_max == 0 ? out_max > 0.1 : out_max / in_max > 10
      bool inputs_zero = Decide(inputs_, [](Range in) -> std::optional<bool> {
        if (in.hi == 0) return true;  // estimates are never 0 at the top: every row is exactly 0
        if (in.lo > 0) return false;
        return std::nullopt;
      });
      bool warn = false;
      if (inputs_zero) {
        warn = Decide(outputs_, [](Range out) -> std::optional<bool> {
          if (out.lo > 0.1) return true;
          if (out.hi <= 0.1) return false;
          return std::nullopt;
        });
      } else {
        Range in = MaxPercent(inputs_), out = MaxPercent(outputs_);
        constexpr double kMargin = 1e-12;  // beyond the rounding of the quotients below
        if (in.lo == in.hi && out.lo == out.hi) {
          warn = out.lo / in.lo > 10;  // both exact: msprobe's own arithmetic
        } else if (out.lo / in.hi > 10 * (1 + kMargin)) {
          warn = true;
        } else if (out.hi / in.lo < 10 * (1 - kMargin)) {
          warn = false;
        } else {
          MakeExact(inputs_);
          MakeExact(outputs_);
          warn = MaxPercent(outputs_).lo / MaxPercent(inputs_).lo > 10;
        }
      }
      if (warn) Mark(t_.rows[outputs_.front()], Level::kWarning, kRelativeWarning);
    }
  }

 private:
  bool SuffixIsOutput(uint32_t suffix) {
    if (suffix >= suffix_output_.size()) suffix_output_.resize(suffix + 1, -1);
    int8_t& known = suffix_output_[suffix];
    if (known < 0) known = t_.npu->Text(suffix).find(".output.") != std::string::npos ? 1 : 0;
    return known == 1;
  }

  // A row's NormRelativeErr as msprobe's checkers read it (CompareTable::NormRelative), or,
  // until a decision needs the exact value, bounds of it (NormRelativeBounds: no cell printed
  // and parsed). Exact: lo == hi == the value.
  struct Estimate {
    double lo = 0, hi = 0;
    bool percent = false;
    bool exact = false;
    bool known = false;
  };
  struct Range {
    double lo, hi;
  };

  const Estimate& Relative(size_t i) {
    Estimate& e = relative_[i - begin_];
    if (!e.known) {
      if (auto bounds = t_.NormRelativeBounds(t_.rows[i])) {
        e = {bounds->lo, bounds->hi, true, false, true};
      } else {
        MakeExact(i);
      }
    }
    return e;
  }
  void MakeExact(size_t i) {
    Estimate& e = relative_[i - begin_];
    if (e.exact) return;
    CompareTable::RelativeValue v = t_.NormRelative(t_.rows[i]);
    e = {v.value, v.value, v.percent, true, true};
  }
  void MakeExact(const std::vector<size_t>& rows) {
    for (size_t i : rows) MakeExact(i);
  }

  // ApiData.get_min_or_max_value(NormRelativeErr, is_min=False): only "...%" cells count.
  // Bounds of it; exact (lo == hi) when the estimates decide which row holds the maximum.
  Range MaxPercent(const std::vector<size_t>& rows) {
    Range best{0.0, 0.0};
    for (size_t i : rows) {
      const Estimate& v = Relative(i);
      if (!v.percent || std::isnan(v.lo)) continue;  // Python max(0.0, nan) keeps 0.0
      best.lo = std::max(best.lo, v.lo);
      best.hi = std::max(best.hi, v.hi);
    }
    return best;
  }

  // test(bounds of MaxPercent(rows)); when the bounds do not decide, on the exact values.
  template <typename Test>
  bool Decide(const std::vector<size_t>& rows, Test test) {
    if (std::optional<bool> decided = test(MaxPercent(rows))) return *decided;
    MakeExact(rows);
    return *test(MaxPercent(rows));
  }

  // |NormRelativeErr| of row i > limit (an output's RelativeErrChecker test).
  bool OutputAbove(size_t i, double limit) {
    const Estimate& e = Relative(i);
    if (!e.exact) {
      if (e.lo > limit) return true;
      if (e.hi <= limit) return false;
      MakeExact(i);
    }
    return std::fabs(e.lo) > limit;
  }

  void Mark(CompareRow& r, Level level, uint16_t bit) {
    if (level > r.level) r.level = level;
    r.checks |= bit;
  }

  // Whether a dtype text holds "class" (a Python scalar's "<class 'int'>"), known per pool id.
  class DtypeIsClass {
   public:
    bool Get(uint32_t dtype, const Dump& dump) {
      if (dtype >= known_.size()) known_.resize(dtype + 1, -1);
      int8_t& known = known_[dtype];
      if (known < 0) known = dump.Text(dtype).find("class") != std::string::npos ? 1 : 0;
      return known == 1;
    }

   private:
    std::vector<int8_t> known_;  // -1 unknown
  };

  CompareTable& t_;
  DtypeIsClass npu_class_, bench_class_;
  size_t begin_ = 0;
  std::vector<size_t> inputs_, outputs_, checked_;
  std::vector<Estimate> relative_;
  std::vector<int8_t> suffix_output_;  // by pool id: -1 unknown
};

bool DtypeCompatibleIds(const CompareTable& t, uint32_t npu_dtype, uint32_t bench_dtype) {
  return t.SameText(npu_dtype, bench_dtype) || DtypeCompatible(t.npu->Text(npu_dtype), t.bench->Text(bench_dtype));
}

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
  table.shared_pool = npu.pool == bench.pool;

  TextArena owned_keys;
  std::vector<std::string_view> npu_keys = EntryKeys(npu, owned_keys);
  std::vector<std::string_view> bench_keys = EntryKeys(bench, owned_keys);
  std::unordered_map<std::string, int> fuzzy_seen;
  auto fuzzy_key = [&](std::string_view key) -> std::string_view {
    std::string base = RenameWithoutCounter(std::string(key));
    int n = fuzzy_seen[base]++;
    return owned_keys.Add(base + "#" + std::to_string(n));
  };
  FirstEntryIndex bench_entry(bench_keys, bench.entries.size());
  // Whether a bench entry is the one its key finds (the first with that key).
  std::vector<uint8_t> bench_first(bench.entries.size(), 0);
  for (size_t i = 0; i < bench.entries.size(); ++i) {
    if (bench_keys[i].empty()) continue;
    if (options.fuzzy) bench_keys[i] = fuzzy_key(bench_keys[i]);
    bench_first[i] = bench_entry.Insert(static_cast<uint32_t>(i));
  }
  fuzzy_seen.clear();
  std::vector<uint8_t> bench_used(bench.rows.size(), 0);
  table.rows.reserve(npu.rows.size());
  ApiChecker checker(table);
  size_t next_bench = 0;  // the two runs mostly call the same APIs in the same order
  for (size_t e = 0; e < npu.entries.size(); ++e) {
    if (npu_keys[e].empty()) continue;
    const Entry& entry = npu.entries[e];
    std::string_view key = options.fuzzy ? fuzzy_key(npu_keys[e]) : npu_keys[e];
    const Entry* bench_e = nullptr;
    if (options.entry_pairing) {
      int64_t paired = e < options.entry_pairing->size() ? (*options.entry_pairing)[e] : -1;
      if (paired >= 0 && static_cast<size_t>(paired) < bench.entries.size()) bench_e = &bench.entries[paired];
    } else if (next_bench < bench.entries.size() && bench_first[next_bench] && bench_keys[next_bench] == key) {
      bench_e = &bench.entries[next_bench++];
    } else if (std::optional<uint32_t> found = bench_entry.Find(key)) {
      bench_e = &bench.entries[*found];
      next_bench = *found + 1;
    }
    size_t begin = table.rows.size();
    for (uint32_t i = entry.first_row; i < entry.first_row + entry.row_count; ++i) {
      const Row& row = npu.rows[i];
      CompareRow out;
      out.npu = i;
      if (bench_e) {
        for (uint32_t j = bench_e->first_row; j < bench_e->first_row + bench_e->row_count; ++j) {
          const Row& b = bench.rows[j];
          if (bench_used[j] || !table.SameText(row.suffix, b.suffix)) continue;
          if (options.require_same_shape && !table.SameText(row.shape, b.shape)) continue;
          out.bench = j;
          bench_used[j] = 1;
          break;
        }
      }
      if (out.bench >= 0 && !DtypeCompatibleIds(table, row.dtype, bench.rows[out.bench].dtype)) {
        out.bench = -1;
        out.dtype_gate_failed = true;
      }
      out.requires_grad_consistent = row.requires_grad == (out.bench >= 0 ? bench.rows[out.bench].requires_grad : 2);
      table.rows.push_back(out);
    }
    checker.Run(begin, table.rows.size());
  }
  for (uint8_t used : bench_used) table.bench_rows_unmatched += used ? 0 : 1;
  return table;
}

}  // namespace parity::msprobe
