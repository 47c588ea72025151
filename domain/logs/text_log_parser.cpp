#include "domain/logs/text_log_parser.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <set>

#include "domain/logs/line_formats.h"
#include "domain/logs/log_coverage.h"
#include "domain/logs/log_events.h"
#include "domain/logs/log_ranks.h"
#include "domain/logs/needle_scanner.h"
#include "support/utf8.h"

namespace parity::logs {

namespace {

constexpr size_t kPrefetchDistance = 8192;  // two pages ahead
constexpr size_t kMaxLineText = 1000;  // error text kept per line
constexpr size_t kMaxWarningsPerCode = 20;

// Needle ids. Format anchors find candidate metric lines; errors, success markers and the
// user's keywords are found in the same pass.
enum NeedleId : int {
  kTorchtitanAnchor = 1,
  kMegatronAnchor,
  kDeepSpeedAnchor,
  kHfAnchor,
  kJsonAnchor,
  kNul,
  kProbe,
  kErrorBase = 100,
  kSuccessBase = 200,
  kKeywordBase = 300,
};

// A line's text for the result: at most kMaxLineText bytes (cut at a character boundary),
// invalid UTF-8 bytes written as \xNN (a log is bytes; JSON is UTF-8).
std::string Truncate(std::string_view text) {
  if (text.size() <= kMaxLineText) return ToValidUtf8(text);
  size_t cut = kMaxLineText;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return ToValidUtf8(text.substr(0, cut)) + "...";
}

class TextLogParserImpl final : public TextLogParser {
 public:
  TextLogParserImpl(const ParseOptions& options, std::optional<UserRegex> regex)
      : options_(options), regex_(std::move(regex)), format_(options.format) {
    want_all_ = std::find(options.metrics.begin(), options.metrics.end(), "*") != options.metrics.end();
    wanted_names_ = options.metrics;
    wanted_names_.insert(wanted_names_.end(), options.keywords.begin(), options.keywords.end());
    if (regex_ && !regex_->required_literal().empty()) {
      literal_scanner_ = NeedleScanner({{regex_->required_literal(), 1, -1}});
    }
    megatron_keys_ = MegatronFieldKeys(wanted_names_);
    BuildScanner();
  }

  // Processes whole lines [begin, end); `end` is just past a '\n' except for the last chunk.
  void Feed(const char* begin, const char* end) override {
    counted_ = begin;
    if (regex_ && !literal_scanner_.empty()) {
      // Only lines holding the regex's required literal can match: find those, read the
      // lines before them with the scanner alone, then the line itself with both, in order.
      for (const char* p = begin; p < end;) {
        const char* hit = nullptr;
        int id = 0;
        if (!literal_scanner_.Next(p, p, end, &hit, &id)) {
          ScanRange(p, end);
          break;
        }
        const void* previous_nl = hit > p ? memrchr(p, '\n', hit - p) : nullptr;
        const char* line_start = previous_nl ? static_cast<const char*>(previous_nl) + 1 : p;
        const void* nl = std::memchr(hit, '\n', end - hit);
        const char* line_end = nl ? static_cast<const char*>(nl) : end;
        ScanRange(p, line_end);
        ApplyRegex(std::string_view(line_start, line_end - line_start));
        p = line_end + 1;
      }
    } else if (regex_) {
      // The regex has no anchor to scan for: every line is visited, in order, so that its
      // metrics and the scanner's interleave as printed.
      for (const char* p = begin; p < end;) {
        const void* nl = std::memchr(p, '\n', end - p);
        const char* line_end = nl ? static_cast<const char*>(nl) : end;
        ScanRange(p, line_end);
        ApplyRegex(std::string_view(p, line_end - p));
        p = line_end + 1;
      }
    } else {
      ScanRange(begin, end);
    }
    lines_before_chunk_ += CountByte(counted_, end, '\n');
    counted_ = end;
    fed_bytes_ += static_cast<uint64_t>(end - begin);
    if (!reserved_) ReserveForTheRest();
  }

  // The file's size, to size the series once its first block has shown how dense metric
  // lines are (growing vectors by doubling re-copies and re-faults them: ~5% of a Megatron
  // log's time). Reserving only claims address space; untouched pages cost nothing.
  void ExpectBytes(uint64_t bytes) override { expected_bytes_ = bytes; }

  void FeedUnterminatedLast(const char* begin, const char* end) override {
    cut_line_ = true;
    cut_line_number_ = lines_before_chunk_ + 1;
    Feed(begin, end);
    cut_line_ = false;
    ++lines_before_chunk_;  // the unterminated last line still counts
    std::string outcome = cut_line_values_ ? "its values were read: each is complete (followed by more of the line) "
                                             "and printed like the values before it"
                                           : cut_line_reason_.empty() ? "it holds no metric value"
                                                                      : "its values were not read: " + cut_line_reason_;
    Warn("truncated_last_line",
         "the last line (" + std::to_string(cut_line_number_) +
             ") has no line end: the log was cut off or is still being written; " + outcome,
         cut_line_number_);
  }

  void NoteLongLine(int64_t bytes) override {
    Warn("long_line", "a line longer than " + std::to_string(bytes) +
                          " bytes was read in pieces; a metric split across the pieces is lost",
         lines_before_chunk_ + 1);
  }

  int64_t lines() const { return lines_before_chunk_; }

  ParseResult Finish(ParseResult result) override;

 private:
  void ReserveForTheRest() {
    reserved_ = true;
    if (expected_bytes_ <= fed_bytes_ || fed_bytes_ == 0) return;
    constexpr double kMaxPoints = 20e6;  // 360 MB of address space per metric at most
    for (auto& [key, rs] : ranks_) {
      for (auto& [name, s] : rs.series) {
        const double estimate = static_cast<double>(s.size()) * static_cast<double>(expected_bytes_) /
                                static_cast<double>(fed_bytes_) * 1.05;
        const auto n = static_cast<size_t>(std::min(estimate, kMaxPoints));
        try {
          s.keys.reserve(n);
          s.values.reserve(n);
          s.decimals.reserve(n);
        } catch (const std::bad_alloc&) {
          // Not a failure: the series grow as they would have without the hint.
        }
      }
    }
  }

  void ScanRange(const char* begin, const char* end) {
    const char* from = begin;
    const char* at = nullptr;
    int id = 0;
    const char* prefetched = begin;
    while (scanner_.Next(begin, from, end, &at, &id)) {
      // Lines dense with hits (every Megatron line) are read in several passes; ask for the
      // bytes a few pages ahead, which the hardware prefetcher (stopping at page ends) does not.
      for (const char* ahead = std::min(at + kPrefetchDistance, end); prefetched < ahead; prefetched += 64) {
        __builtin_prefetch(prefetched);
      }
      const void* previous_nl = at > begin ? memrchr(begin, '\n', at - begin) : nullptr;
      const char* line_start = previous_nl ? static_cast<const char*>(previous_nl) + 1 : begin;
      const LineFacts facts = ScanLine(line_start, end);
      line_has_nul_ = facts.has_nul;
      esc_free_line_ = facts.esc_free ? std::string_view(line_start, facts.end - line_start) : std::string_view();
      from = HandleHit(id, line_start, at, facts.end);
      esc_free_line_ = {};  // the buffer may hold other bytes there later
      if (rebuild_scanner_) {
        rebuild_scanner_ = false;
        BuildScanner();
      }
    }
  }

  int64_t LineNumberAt(const char* line_start) {
    lines_before_chunk_ += CountByte(counted_, line_start, '\n');
    counted_ = line_start;
    return lines_before_chunk_ + 1;
  }

  // The line without ANSI sequences and trailing '\r': the line itself when it has no ESC
  // byte (no copy, the common case), else a cleaned copy in clean_.
  std::string_view Clean(std::string_view line) {
    const bool known_esc_free = line.data() >= esc_free_line_.data() &&
                                line.data() + line.size() <= esc_free_line_.data() + esc_free_line_.size();
    if (known_esc_free || std::memchr(line.data(), 0x1b, line.size()) == nullptr) {
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      return line;
    }
    StripAnsi(line, clean_);
    return clean_;
  }

  void Warn(const std::string& code, std::string message, std::optional<int64_t> line) {
    auto& count = warning_counts_[code];
    if (count++ < static_cast<int64_t>(kMaxWarningsPerCode)) {
      warnings_.push_back({code, ToValidUtf8(message), line});
    }
  }

  void BuildScanner() {
    std::vector<NeedleScanner::Needle> needles;
    auto want_format = [&](std::initializer_list<LogFormat> fs) {
      if (format_ == LogFormat::kAuto) return true;
      return std::find(fs.begin(), fs.end(), format_) != fs.end();
    };
    if (want_format({LogFormat::kTorchtitan, LogFormat::kTorchtitanNpu}))
      needles.push_back({"step:", kTorchtitanAnchor, 3});
    if (want_format({LogFormat::kMegatron, LogFormat::kDeepSpeed}))
      needles.push_back({"| consumed", kMegatronAnchor, 0});
    if (want_format({LogFormat::kDeepSpeed, LogFormat::kMegatron}))
      needles.push_back({"step=", kDeepSpeedAnchor, 3});
    if (want_format({LogFormat::kHfTrainer})) needles.push_back({"{'", kHfAnchor, 0});
    if (want_format({LogFormat::kJsonl})) needles.push_back({"{\"", kJsonAnchor, 0});
    needles.push_back({std::string(1, '\0'), kNul, 0});
    needles.push_back({std::string(kProbeMarker), kProbe, -1});
    const auto& errors = ErrorNeedles();
    for (size_t i = 0; i < errors.size(); ++i)
      needles.push_back({errors[i].text, kErrorBase + int(i), errors[i].anchor});
    for (size_t i = 0; i < options_.success_markers.size(); ++i) {
      const std::string& marker = options_.success_markers[i];
      // "training success" is anchored on its rare "cc"; others on their rarest pair.
      const size_t cc = marker.find("cc");
      needles.push_back({marker, kSuccessBase + int(i), cc == std::string::npos ? -1 : int(cc)});
    }
    for (size_t i = 0; i < options_.keywords.size(); ++i)
      needles.push_back({options_.keywords[i], kKeywordBase + int(i), -1});
    scanner_ = NeedleScanner(std::move(needles));
  }

  // Returns where scanning resumes.
  const char* HandleHit(int id, const char* line_start, const char* at, const char* line_end) {
    const std::string_view line(line_start, line_end - line_start);
    // A line with binary bytes in it is damaged: whatever it seems to say is not trusted.
    if (id == kNul || line_has_nul_) {
      const int64_t n = LineNumberAt(line_start);
      if (binary_lines_++ == 0) first_binary_line_ = n;
      return line_end;
    }
    if (id == kProbe) return HandleProbe(line);
    if (id >= kErrorBase && id < kSuccessBase) return HandleError(line, at, line_end);
    if (id >= kSuccessBase && id < kKeywordBase) {
      const int64_t n = LineNumberAt(line_start);
      StripAnsi(line, clean_);
      success_line_ = n;
      success_text_ = Truncate(clean_);
      return at + 1;
    }
    // A format anchor or a keyword: the whole line is read once, then skipped. An anchor
    // in a probe line's prefix must not hide the probe (the rare non-metric hit pays).
    if (!HandleMetricLine(line) && HasProbeMarker(line)) return HandleProbe(line);
    return line_end;
  }

  static bool HasProbeMarker(std::string_view line) {
    return memmem(line.data(), line.size(), kProbeMarker.data(), kProbeMarker.size()) != nullptr;
  }

  // A PARITY_PROBE line (inject_prints): kept whole, or counted as malformed with its line
  // number; never an error or a metric line itself.
  const char* HandleProbe(std::string_view line) {
    const int64_t n = LineNumberAt(line.data());
    const std::string_view clean = Clean(line);
    const RankPrefix prefix = SplitRankPrefix(clean);
    std::string error;
    if (auto record = ReadProbeLine(clean, prefix.rank, n, error)) {
      probes_.Add(std::move(*record));
    } else {
      Warn("malformed_probe", "line " + std::to_string(n) + ": PARITY_PROBE line not read: " + error, n);
      probes_.AddMalformed(n, ToValidUtf8(error));
    }
    return line.data() + line.size();
  }

  const char* HandleError(std::string_view line, const char* at, const char* line_end) {
    if (HasProbeMarker(line)) return HandleProbe(line);
    StripAnsi(line, clean_);
    auto kind = ClassifyErrorLine(clean_);
    if (!kind) return at + 1;
    const int64_t n = LineNumberAt(line.data());
    const RankPrefix prefix = SplitRankPrefix(clean_);
    ++errors_total_;
    ++error_counts_[*kind];
    if (errors_.size() < options_.max_errors) {
      errors_.push_back({n, *kind, Truncate(clean_), prefix.rank});
    }
    return line_end;  // one error per line, of its most specific kind
  }

  bool Wanted(std::string_view name) const {
    if (want_all_) return true;
    for (const auto& m : options_.metrics) {
      if (m == name) return true;
    }
    for (const auto& k : options_.keywords) {
      if (k == name) return true;
    }
    return IsRegexMetric(name);
  }

  // Reads the line with the format reader(s) in force; false when none accepts it.
  bool ReadFormatLine(std::string_view clean, MetricLine& out) {
    auto try_torchtitan = [&]() {
      for (size_t at = clean.find("step:"); at != std::string_view::npos; at = clean.find("step:", at + 1)) {
        out.Clear();
        if (!ReadTorchtitanLine(clean, at, filter_, out)) continue;
        if (out.has_loss) return true;
      }
      out.Clear();
      return false;
    };
    auto try_megatron = [&]() {
      out.Clear();
      // Auto-detection needs the tell-tale field; once the format is known, the reader's
      // own "iteration N" check suffices (and saves a search per line).
      if (format_ == LogFormat::kAuto && !memmem(clean.data(), clean.size(), "| consumed", 10)) return false;
      return ReadMegatronLine(clean, filter_, out);
    };
    auto try_deepspeed = [&]() {
      out.Clear();
      const size_t at = clean.find("step=");
      if (at == std::string_view::npos || clean.find("skipped=", at) == std::string_view::npos)
        return false;
      return ReadDeepSpeedLine(clean, at, filter_, out);
    };
    auto try_hf = [&]() {
      out.Clear();
      const size_t at = clean.find("{'");
      return at != std::string_view::npos && ReadHfTrainerLine(clean, at, filter_, out);
    };
    auto try_jsonl = [&]() {
      out.Clear();
      const size_t at = clean.find("{\"");
      return at != std::string_view::npos && ReadJsonlLine(clean, at, filter_, out);
    };
    switch (format_) {
      case LogFormat::kTorchtitan:
      case LogFormat::kTorchtitanNpu:
        return try_torchtitan();
      case LogFormat::kMegatron:
      case LogFormat::kDeepSpeed:
        if (try_megatron()) return true;
        if (try_deepspeed()) {
          deepspeed_lines_ = true;
          return true;
        }
        return false;
      case LogFormat::kHfTrainer:
        return try_hf();
      case LogFormat::kJsonl:
        return try_jsonl();
      case LogFormat::kAuto: {
        LogFormat found = LogFormat::kAuto;
        if (try_torchtitan()) found = out.npu_variant ? LogFormat::kTorchtitanNpu : LogFormat::kTorchtitan;
        else if (try_megatron()) found = LogFormat::kMegatron;
        else if (try_hf()) found = LogFormat::kHfTrainer;
        else if (try_deepspeed()) found = LogFormat::kDeepSpeed;
        else if (try_jsonl()) found = LogFormat::kJsonl;
        if (found == LogFormat::kAuto) return false;
        format_ = found;
        detected_ = true;
        if (found == LogFormat::kDeepSpeed) deepspeed_lines_ = true;
        rebuild_scanner_ = true;  // drop the other formats' anchors
        return true;
      }
      default:
        return false;
    }
  }

  // Whether a prefixed line of `rank` may feed a series: the rank asked for, or any.
  bool WantRank(int rank) const { return !options_.rank || rank == *options_.rank; }

  // The series the line's rank feeds, or nullptr when the line is not for us. With a rank
  // asked for, its lines and unprefixed lines feed one group; otherwise each rank (and the
  // unprefixed lines) has its own, and Finish decides which is the result's.
  RankSeries* SeriesFor(std::optional<int> rank) {
    if (rank) ranks_seen_.insert(*rank);
    if (options_.rank) {
      if (rank && *rank != *options_.rank) return nullptr;
      rank = options_.rank;
    }
    const int key = rank.value_or(-1);
    if (last_group_ && last_key_ == key) return last_group_;
    RankSeries& group = ranks_[key];
    group.rank = rank;
    last_key_ = key;
    last_group_ = &group;
    return &group;
  }

  // Whether the line was a metric line (of any rank).
  bool HandleMetricLine(std::string_view line) {
    const RankPrefix prefix = SplitRankPrefix(line);
    // Cheap rejection of other ranks before any copying.
    if (prefix.rank && !WantRank(*prefix.rank)) {
      ranks_seen_.insert(*prefix.rank);
      return true;
    }
    const std::string_view clean = Clean(prefix.rest);
    line_.Clear();
    // Only the wanted metrics are decoded, except on the lines sampled to learn what the
    // log carries (available_metrics).
    ++metric_candidates_;
    const bool sample = metric_candidates_ <= 64 || (metric_candidates_ & 1023) == 0;
    filter_.all = want_all_ || sample;
    filter_.names = &wanted_names_;
    filter_.megatron_keys = &megatron_keys_;
    bool is_metric_line = format_ != LogFormat::kTensorBoard && ReadFormatLine(clean, line_);
    if (is_metric_line && format_ == LogFormat::kTorchtitan && line_.npu_variant) {
      format_ = LogFormat::kTorchtitanNpu;
    }
    if (!is_metric_line) line_.Clear();
    // A metric the user's regex names is the regex's alone (ApplyRegex), never read twice.
    if (regex_) {
      std::erase_if(line_.metrics, [&](const LineMetric& m) { return IsRegexMetric(m.name); });
    }
    // The user's keywords, on this line whatever its format.
    for (const auto& keyword : options_.keywords) {
      bool present = false;
      for (const auto& m : line_.metrics) present = present || m.name == keyword;
      if (present) continue;
      LineMetric m;
      if (ReadKeywordValue(clean, keyword, m)) {
        line_.metrics.push_back(std::move(m));
        keyword_lines_ = true;
      }
    }
    if (line_.metrics.empty() && line_.not_available.empty()) return is_metric_line;
    Record(prefix.rank, line.data(), clean);
    return true;
  }

  // `clean` is the line as read (ANSI-free); the metric names may view into it.
  void Record(std::optional<int> rank, const char* line_start, std::string_view clean) {
    RankSeries* target = SeriesFor(rank);
    if (!target) return;
    if (cut_line_ && !CutLineComplete(*target, clean)) return;
    if (!line_.step) {
      if (auto s = FindStepNumber(clean)) {
        line_.step = *s;
      } else {
        line_.step = ++target->ordinal;
        ++target->unnumbered;
      }
    }
    const int64_t step = *line_.step;
    if (step < target->last_step) {
      const int64_t n = LineNumberAt(line_start);
      if (target->restart_count++ < static_cast<int64_t>(kMaxWarningsPerCode)) {
        target->restarts.push_back({"restart",
                                    "step went back from " + std::to_string(target->last_step) +
                                        " to " + std::to_string(step) +
                                        " (a restarted or resumed run); the later values are kept",
                                    n});
      }
    }
    target->last_step = step;
    if (line_.total_steps) target->total_steps = line_.total_steps;
    ++target->metric_lines;
    target->line_steps.push_back(step);
    target->last_line_values = WantedValues();
    for (std::string_view name : line_.not_available) {
      if (filter_.all) available_.insert(ToValidUtf8(name));
      if (Wanted(name)) ++target->not_available[std::string(name)];
    }
    // The names the log carries, from the lines read in full (filter_.all).
    if (filter_.all) {
      for (const auto& m : line_.metrics) available_.insert(ToValidUtf8(m.name));
    }
    for (const auto& m : line_.metrics) {
      if (m.name == "loss" && loss_decimals_ < 0 && m.decimals != kExact)
        loss_decimals_ = m.decimals;
      if (Wanted(m.name)) target->Get(m.name).Add(step, m.value, m.decimals);
    }
  }

  // The complete-line rule for the file's unterminated last line: its values count only
  // when none can have been cut, i.e. the line does not end inside a number, it carries as
  // many values as the rank's previous metric line, and each has the decimals its series
  // printed before (a cut "3.10399" -> "3.1" changes them). Otherwise nothing of the line
  // is recorded, and FeedUnterminatedLast's warning says why.
  bool CutLineComplete(const RankSeries& target, std::string_view clean) {
    const char last = clean.empty() ? ' ' : clean.back();
    const bool in_number = (last >= '0' && last <= '9') || last == '.' || last == '-' || last == '+' ||
                           last == 'e' || last == 'E';
    if (in_number) {
      cut_line_reason_ = "the line ends inside a number";
      return false;
    }
    const size_t values = WantedValues();
    if (target.metric_lines > 0 && values < target.last_line_values) {
      cut_line_reason_ = "it carries " + std::to_string(values) + " of the " +
                         std::to_string(target.last_line_values) + " values the lines before it printed";
      return false;
    }
    for (const auto& m : line_.metrics) {
      const KeyedSeries* s = target.Find(m.name);
      if (!s || s->empty()) continue;
      const size_t n = s->size();
      const bool steady = n < 2 || s->decimals[n - 1] == s->decimals[n - 2];
      if (steady && s->decimals[n - 1] != m.decimals) {
        cut_line_reason_ = "'" + std::string(m.name) + "' is printed with other decimals than before";
        return false;
      }
    }
    cut_line_values_ = !line_.metrics.empty();
    return true;
  }

  size_t WantedValues() const {
    size_t n = 0;
    for (const auto& m : line_.metrics) n += Wanted(m.name) ? 1 : 0;
    return n;
  }

  void ApplyRegex(std::string_view line) {
    const RankPrefix prefix = SplitRankPrefix(line);
    if (prefix.rank && !WantRank(*prefix.rank)) return;
    const std::string_view clean = Clean(prefix.rest);
    line_.Clear();
    if (!regex_->Match(clean, line_)) return;
    regex_lines_ = true;
    Record(prefix.rank, line.data(), clean);
  }

  bool IsRegexMetric(std::string_view name) const {
    if (!regex_) return false;
    const auto& names = regex_->metric_names();
    return std::find(names.begin(), names.end(), name) != names.end();
  }

  const ParseOptions& options_;
  std::optional<UserRegex> regex_;
  LogFormat format_;
  bool detected_ = false;
  bool rebuild_scanner_ = false;
  // Facts of the line HandleHit is reading (ScanLine), so it is not searched again.
  bool line_has_nul_ = false;
  std::string_view esc_free_line_;
  bool want_all_ = false;
  std::vector<std::string> wanted_names_;
  MetricFilter filter_;
  std::vector<FieldKey> megatron_keys_;  // of wanted_names_
  int64_t metric_candidates_ = 0;
  NeedleScanner scanner_;
  NeedleScanner literal_scanner_;  // the regex's required literal, if it has one

  const char* counted_ = nullptr;
  int64_t lines_before_chunk_ = 0;

  std::string clean_;
  MetricLine line_;
  std::map<int, RankSeries> ranks_;  // key: the rank, -1 for unprefixed lines
  int last_key_ = 0;
  RankSeries* last_group_ = nullptr;
  // The unterminated last line being read, and what became of it.
  bool cut_line_ = false;
  int64_t cut_line_number_ = 0;
  bool cut_line_values_ = false;
  std::string cut_line_reason_;
  std::set<int> ranks_seen_;
  std::set<std::string> available_;
  int loss_decimals_ = -1;
  bool deepspeed_lines_ = false;
  bool keyword_lines_ = false;
  bool regex_lines_ = false;

  int64_t binary_lines_ = 0;
  int64_t first_binary_line_ = 0;
  std::optional<int64_t> success_line_;
  std::string success_text_;
  std::vector<LogError> errors_;
  int64_t errors_total_ = 0;
  std::map<std::string, int64_t> error_counts_;
  std::vector<ParseWarning> warnings_;
  std::map<std::string, int64_t> warning_counts_;
  ProbeLog probes_;
  uint64_t expected_bytes_ = 0;
  uint64_t fed_bytes_ = 0;
  bool reserved_ = false;
};

std::string DescribeFormat(LogFormat format, int loss_decimals, bool deepspeed_lines) {
  switch (format) {
    case LogFormat::kTorchtitan:
    case LogFormat::kTorchtitanNpu:
      if (loss_decimals == 4) return "loss printed %7.4f (torchtitan <= v0.2.1)";
      if (loss_decimals == 5) return "loss printed %8.5f (torchtitan >= v0.2.2)";
      return "";
    case LogFormat::kMegatron:
    case LogFormat::kDeepSpeed:
      return deepspeed_lines ? "Megatron training_log lines with DeepSpeed progress lines"
                             : "Megatron / MindSpeed training_log lines";
    case LogFormat::kHfTrainer:
      return "Trainer log dicts; loss rounded to 4 decimals, grad_norm and learning_rate in full";
    case LogFormat::kJsonl:
      return "JSON lines the trainer wrote; values with 15+ significant digits are stored in full";
    default:
      return "";
  }
}

ParseResult TextLogParserImpl::Finish(ParseResult result) {
  result.lines = lines_before_chunk_;
  if (format_ == LogFormat::kMegatron && deepspeed_lines_) format_ = LogFormat::kDeepSpeed;
  result.format = format_;
  if (format_ == LogFormat::kAuto && (keyword_lines_ || regex_lines_)) result.format = LogFormat::kAuto;
  result.format_detail = DescribeFormat(format_, loss_decimals_, deepspeed_lines_);
  if (format_ == LogFormat::kAuto && !keyword_lines_ && !regex_lines_) {
    warnings_.push_back({"no_metric_lines",
                         "no training-metric line of a known format (torchtitan, torchtitan-npu, "
                         "Megatron/MindSpeed, DeepSpeed, HF Trainer, JSON lines) was found",
                         std::nullopt});
  }

  // The series, in the order asked for (all found, sorted, for "*").
  std::vector<std::string> order;
  if (want_all_) {
    std::set<std::string> names;
    for (auto& [key, group] : ranks_) {
      for (auto& [name, s] : group.series) names.insert(name);
    }
    order.assign(names.begin(), names.end());
  } else {
    order = options_.metrics;
    for (const auto& k : options_.keywords) {
      if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
    }
    if (regex_) {
      for (const auto& k : regex_->metric_names()) {
        if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
      }
    }
  }
  result.ranks_seen.assign(ranks_seen_.begin(), ranks_seen_.end());
  const RankSeries* chosen =
      SelectRanks(ranks_, order, options_.rank, format_ == LogFormat::kJsonl, result, warnings_);
  if (chosen->unnumbered > 0) {
    warnings_.push_back({"no_step_numbers",
                         std::to_string(chosen->unnumbered) +
                             " metric lines carry no step number; they were numbered 1, 2, ... in "
                             "the order printed (for HF Trainer without its progress bar in the log, "
                             "multiply by logging_steps)",
                         std::nullopt});
  }
  for (const auto& w : chosen->restarts) warnings_.push_back(w);
  if (chosen->restart_count > static_cast<int64_t>(kMaxWarningsPerCode)) {
    warnings_.push_back({"restart", std::to_string(chosen->restart_count) + " restarts in all", std::nullopt});
  }
  if (binary_lines_ > 0) {
    warnings_.push_back({"binary_bytes",
                         std::to_string(binary_lines_) +
                             " lines contain NUL bytes (binary garbage, e.g. a crash or a disk "
                             "error); the first is line " + std::to_string(first_binary_line_) +
                             "; those lines were skipped",
                         first_binary_line_});
  }
  for (auto& [code, count] : warning_counts_) {
    if (count > static_cast<int64_t>(kMaxWarningsPerCode)) {
      warnings_.push_back({code, std::to_string(count) + " '" + code + "' warnings in all (first " +
                                     std::to_string(kMaxWarningsPerCode) + " listed)",
                           std::nullopt});
    }
  }

  result.available_metrics.assign(available_.begin(), available_.end());
  for (const auto& name : order) {
    if (result.Find(name)) continue;
    if (auto na = chosen->not_available.find(name); na != chosen->not_available.end()) {
      warnings_.push_back({"metric_not_available",
                           "metric '" + ToValidUtf8(name) + "' was printed without a value (N/A) at all " +
                               std::to_string(na->second) + " logged steps that name it",
                           std::nullopt});
      continue;
    }
    std::string have;
    for (const auto& a : result.available_metrics) have += (have.empty() ? "" : ", ") + a;
    warnings_.push_back({"metric_not_found",
                         "metric '" + ToValidUtf8(name) + "' was not found in the log" +
                             (have.empty() ? std::string() : " (it has: " + have + ")"),
                         std::nullopt});
  }
  for (const auto& m : result.metrics) {
    if (m.not_available > 0) {
      warnings_.push_back({"not_available",
                           "'" + m.name + "' was printed without a value (N/A) at " + std::to_string(m.not_available) +
                               " logged steps; those steps have no value for it",
                           std::nullopt});
    }
  }
  result.success_marker = success_line_.has_value();
  result.success_line = success_line_;
  result.success_text = success_text_;
  result.errors = std::move(errors_);
  result.errors_total = errors_total_;
  result.error_counts = std::move(error_counts_);
  FillCoverage(result, options_, chosen->total_steps, warnings_);
  if (probes_.dropped > 0) {
    warnings_.push_back({"probe_limit",
                         std::to_string(probes_.dropped) + " PARITY_PROBE lines beyond the first " +
                             std::to_string(ProbeLog::kMaxProbeRecords) +
                             " were counted but not kept; probe fewer calls (inject_prints' calls option)",
                         std::nullopt});
  }
  result.probes = std::move(probes_);
  result.warnings = std::move(warnings_);
  return result;
}

}  // namespace

std::unique_ptr<TextLogParser> MakeTextLogParser(const ParseOptions& options, std::optional<UserRegex> regex) {
  return std::make_unique<TextLogParserImpl>(options, std::move(regex));
}

}  // namespace parity::logs
