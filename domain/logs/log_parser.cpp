#include "domain/logs/log_parser.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fnmatch.h>
#include <memory>
#include <new>
#include <set>
#include <unordered_map>

#include "support/guarded_mapping.h"
#include "domain/logs/line_formats.h"
#include "domain/logs/log_events.h"
#include "domain/logs/needle_scanner.h"
#include "domain/logs/sha256.h"
#include "domain/logs/tfevents.h"
#include "domain/logs/user_regex.h"

namespace parity::logs {

namespace {

constexpr size_t kChunkBytes = 1 << 20;  // read() blocks: small enough to stay in L2 for the scans
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
  kNul,
  kProbe,
  kErrorBase = 100,
  kSuccessBase = 200,
  kKeywordBase = 300,
};

std::string Truncate(std::string_view text) {
  if (text.size() <= kMaxLineText) return std::string(text);
  return std::string(text.substr(0, kMaxLineText)) + "...";
}

// The per-rank state of metric lines: the series of each wanted metric.
struct RankSeries {
  std::optional<int> rank;  // nullopt: unprefixed lines only
  std::vector<std::pair<std::string, KeyedSeries>> series;
  int64_t metric_lines = 0;
  int64_t last_step = INT64_MIN;
  std::optional<int64_t> total_steps;
  std::vector<ParseWarning> restarts;
  int64_t restart_count = 0;
  int64_t ordinal = 0;  // lines without a step number are numbered 1, 2, ...
  int64_t unnumbered = 0;

  KeyedSeries& Get(std::string_view name) {
    for (auto& [n, s] : series) {
      if (n == name) return s;
    }
    series.emplace_back(std::string(name), KeyedSeries{});
    return series.back().second;
  }
};

class TextLogParser {
 public:
  TextLogParser(const ParseOptions& options, std::optional<UserRegex> regex)
      : options_(options), regex_(std::move(regex)), format_(options.format) {
    primary_.rank = options.rank;
    if (!options.rank) primary_.rank = 0;
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
  void Feed(const char* begin, const char* end) {
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
  void ExpectBytes(uint64_t bytes) { expected_bytes_ = bytes; }

  void MarkTruncatedLastLine() {
    ++lines_before_chunk_;  // the unterminated last line still counts
    Warn("truncated_last_line",
         "the last line (" + std::to_string(lines_before_chunk_) +
             ") has no line end: the log was cut off or is still being written; it was read as is",
         lines_before_chunk_);
  }

  void NoteLongLine(int64_t bytes) {
    Warn("long_line", "a line longer than " + std::to_string(bytes) +
                          " bytes was read in pieces; a metric split across the pieces is lost",
         lines_before_chunk_ + 1);
  }

  int64_t lines() const { return lines_before_chunk_; }

  ParseResult Finish(ParseResult result);

 private:
  void ReserveForTheRest() {
    reserved_ = true;
    if (expected_bytes_ <= fed_bytes_ || fed_bytes_ == 0) return;
    constexpr double kMaxPoints = 20e6;  // 360 MB of address space per metric at most
    for (RankSeries* rs : {&primary_, fallback_.get()}) {
      if (!rs) continue;
      for (auto& [name, s] : rs->series) {
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
      warnings_.push_back({code, std::move(message), line});
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
      probes_.AddMalformed(n, std::move(error));
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
      case LogFormat::kAuto: {
        LogFormat found = LogFormat::kAuto;
        if (try_torchtitan()) found = out.npu_variant ? LogFormat::kTorchtitanNpu : LogFormat::kTorchtitan;
        else if (try_megatron()) found = LogFormat::kMegatron;
        else if (try_hf()) found = LogFormat::kHfTrainer;
        else if (try_deepspeed()) found = LogFormat::kDeepSpeed;
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

  // Whether a prefixed line of `rank` may feed a series: the rank asked for; without one,
  // rank 0, and (until rank 0 has printed a metric line) the fallback rank.
  bool WantRank(int rank) const {
    if (options_.rank) return rank == *options_.rank;
    if (rank == 0) return true;
    if (primary_.metric_lines > 0) return false;
    return !fallback_ || fallback_->rank == rank;
  }

  // Picks the series the line's rank feeds, or nullptr when the line is not for us.
  RankSeries* SeriesFor(std::optional<int> rank) {
    if (rank) ranks_seen_.insert(*rank);
    if (!rank || rank == primary_.rank) return &primary_;
    if (options_.rank) return nullptr;
    // No rank asked for: rank 0 is preferred; the first other rank is kept in case rank 0
    // prints no metrics (Megatron prints from the last pipeline rank).
    if (!fallback_) {
      fallback_ = std::make_unique<RankSeries>();
      fallback_->rank = rank;
    }
    return fallback_->rank == rank ? fallback_.get() : nullptr;
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
    if (line_.metrics.empty()) return is_metric_line;
    Record(prefix.rank, line.data(), clean);
    return true;
  }

  // `clean` is the line as read (ANSI-free); the metric names may view into it.
  void Record(std::optional<int> rank, const char* line_start, std::string_view clean) {
    RankSeries* target = SeriesFor(rank);
    if (!target) return;
    if (target == &primary_ && fallback_ && primary_.metric_lines == 0) fallback_.reset();
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
    // The names the log carries, from the lines read in full (filter_.all).
    if (filter_.all) {
      for (const auto& m : line_.metrics) available_.insert(std::string(m.name));
    }
    for (const auto& m : line_.metrics) {
      if (m.name == "loss" && target == &primary_ && loss_decimals_ < 0 && m.decimals != kExact)
        loss_decimals_ = m.decimals;
      if (Wanted(m.name)) target->Get(m.name).Add(step, m.value, m.decimals);
    }
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
  RankSeries primary_;
  std::unique_ptr<RankSeries> fallback_;
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
    default:
      return "";
  }
}

}  // namespace

ParseResult TextLogParser::Finish(ParseResult result) {
  result.lines = lines_before_chunk_;
  RankSeries* chosen = &primary_;
  if (primary_.metric_lines == 0 && fallback_ && fallback_->metric_lines > 0) {
    chosen = fallback_.get();
    warnings_.push_back({"rank_fallback",
                         "rank 0 printed no metric lines; read rank " + std::to_string(*chosen->rank) +
                             " instead (pass rank to choose another)",
                         std::nullopt});
  }
  result.rank = chosen->rank;
  if (!options_.rank && primary_.metric_lines > 0 && ranks_seen_.empty()) result.rank.reset();
  result.ranks_seen.assign(ranks_seen_.begin(), ranks_seen_.end());
  if (ranks_seen_.size() > 1) {
    warnings_.push_back({"multiple_ranks",
                         "metric lines of " + std::to_string(ranks_seen_.size()) +
                             " ranks are interleaved in this log; only rank " +
                             (result.rank ? std::to_string(*result.rank) : std::string("-")) +
                             " (and unprefixed lines) was read",
                         std::nullopt});
  }
  if (format_ == LogFormat::kMegatron && deepspeed_lines_) format_ = LogFormat::kDeepSpeed;
  result.format = format_;
  if (format_ == LogFormat::kAuto && (keyword_lines_ || regex_lines_)) result.format = LogFormat::kAuto;
  result.format_detail = DescribeFormat(format_, loss_decimals_, deepspeed_lines_);
  if (format_ == LogFormat::kAuto && !keyword_lines_ && !regex_lines_) {
    warnings_.push_back({"no_metric_lines",
                         "no training-metric line of a known format (torchtitan, torchtitan-npu, "
                         "Megatron/MindSpeed, DeepSpeed, HF Trainer) was found",
                         std::nullopt});
  }
  if (chosen->unnumbered > 0) {
    warnings_.push_back({"no_step_numbers",
                         std::to_string(chosen->unnumbered) +
                             " metric lines carry no step number; they were numbered 1, 2, ... in "
                             "the order printed (for HF Trainer multiply by logging_steps)",
                         std::nullopt});
  }
  for (auto& w : chosen->restarts) warnings_.push_back(std::move(w));
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

  // The series, in the order asked for (all found, sorted, for "*").
  std::vector<std::string> order;
  if (want_all_) {
    for (auto& [name, s] : chosen->series) order.push_back(name);
    std::sort(order.begin(), order.end());
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
  for (const auto& name : order) {
    auto it = std::find_if(chosen->series.begin(), chosen->series.end(),
                           [&](const auto& p) { return p.first == name; });
    if (it == chosen->series.end() || it->second.empty()) continue;
    MetricResult m;
    m.name = name;
    m.source = "log";
    m.series = std::move(it->second);
    m.issues = Finalize(m.series);
    m.precision = SummarisePrecision(m.series);
    m.non_finite = CountNonFinite(m.series);
    result.metrics.push_back(std::move(m));
  }
  result.available_metrics.assign(available_.begin(), available_.end());
  for (const auto& name : order) {
    if (result.Find(name)) continue;
    std::string have;
    for (const auto& a : result.available_metrics) have += (have.empty() ? "" : ", ") + a;
    warnings_.push_back({"metric_not_found",
                         "metric '" + name + "' was not found in the log" +
                             (have.empty() ? std::string() : " (it has: " + have + ")"),
                         std::nullopt});
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

void FillCoverage(ParseResult& result, const ParseOptions& options, std::optional<int64_t> total,
                  std::vector<ParseWarning>& warnings) {
  const MetricResult* primary = result.Find("loss");
  if (!primary && !result.metrics.empty()) primary = &result.metrics.front();
  StepCoverage& c = result.steps;
  c.expected_last = options.expected_steps ? options.expected_steps : total;
  if (!primary) return;
  const auto& keys = primary->series.keys;
  c.seen = static_cast<int64_t>(keys.size());
  c.duplicates = primary->issues.duplicates;
  c.restarts = primary->issues.restarts;
  if (primary->issues.duplicates > 0) {
    warnings.push_back({"duplicate_steps",
                        std::to_string(primary->issues.duplicates) + " steps of '" + primary->name +
                            "' were printed more than once (first: step " +
                            std::to_string(primary->issues.first_duplicate) +
                            "); the value printed last is kept",
                        std::nullopt});
  }
  if (keys.empty()) return;
  c.first = keys.front();
  c.last = keys.back();
  // The logging interval is the most common distance between consecutive steps.
  // Counted by runs of equal distances: one map update per run, not per step.
  std::unordered_map<int64_t, int64_t> deltas;
  int64_t run_delta = 0, run_length = 0;
  for (size_t i = 1; i < keys.size(); ++i) {
    const int64_t d = keys[i] - keys[i - 1];
    if (d == run_delta && run_length > 0) {
      ++run_length;
      continue;
    }
    if (run_length > 0) deltas[run_delta] += run_length;
    run_delta = d;
    run_length = 1;
  }
  if (run_length > 0) deltas[run_delta] += run_length;
  int64_t best = 0, interval = 1;
  for (auto [d, n] : deltas) {
    if (n > best || (n == best && d < interval)) {
      best = n;
      interval = d;
    }
  }
  c.interval = interval;
  int64_t last = *c.last;
  if (c.expected_last && *c.expected_last > last) {
    last = *c.first + (*c.expected_last - *c.first) / interval * interval;
    warnings.push_back({"incomplete_run",
                        "the log ends at step " + std::to_string(*c.last) + " but " +
                            std::to_string(*c.expected_last) + " steps were expected",
                        std::nullopt});
  }
  c.expected_count = (last - *c.first) / interval + 1;
  // Walk the logged steps, not the grid: a run cut short of a 3,000,000-step plan would
  // otherwise cost a loop over every planned step.
  int64_t expected = *c.first;  // the next grid step not yet accounted for
  auto note_missing_until = [&](int64_t end) {  // grid steps in [expected, end) are missing
    if (end <= expected) return;
    const int64_t n = (end - expected + interval - 1) / interval;
    for (int64_t s = expected; c.missing.size() < 100 && s < end; s += interval) c.missing.push_back(s);
    c.missing_count += n;
    expected += n * interval;
  };
  for (int64_t key : keys) {
    if (key > last) break;
    if (key == expected) {  // the common case: the next grid step (no division needed)
      expected += interval;
      continue;
    }
    if (key < expected || (key - *c.first) % interval != 0) continue;  // off the grid
    note_missing_until(key);
    expected = key + interval;
  }
  note_missing_until(last + 1);
  if (c.missing_count > 0) {
    warnings.push_back({"missing_steps",
                        std::to_string(c.missing_count) + " steps missing on the grid " +
                            std::to_string(*c.first) + ", " + std::to_string(*c.first + interval) +
                            ", ... " + std::to_string(last) + " (first missing: " +
                            std::to_string(c.missing.front()) + ")",
                        std::nullopt});
  }
}

const MetricResult* ParseResult::Find(const std::string& name) const {
  for (const auto& m : metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

const char* FormatName(LogFormat format) {
  switch (format) {
    case LogFormat::kAuto: return "auto";
    case LogFormat::kTorchtitan: return "torchtitan";
    case LogFormat::kTorchtitanNpu: return "torchtitan-npu";
    case LogFormat::kMegatron: return "megatron";
    case LogFormat::kDeepSpeed: return "deepspeed";
    case LogFormat::kHfTrainer: return "hf_trainer";
    case LogFormat::kTensorBoard: return "tensorboard";
  }
  return "auto";
}

const std::vector<std::string>& FormatNames() {
  static const std::vector<std::string> names = {"auto", "torchtitan", "torchtitan-npu", "megatron",
                                                 "mindspeed", "pangu", "deepspeed", "hf_trainer",
                                                 "tensorboard"};
  return names;
}

Result<LogFormat> FormatFromName(const std::string& name) {
  for (LogFormat f : {LogFormat::kAuto, LogFormat::kTorchtitan, LogFormat::kTorchtitanNpu,
                      LogFormat::kMegatron, LogFormat::kDeepSpeed, LogFormat::kHfTrainer,
                      LogFormat::kTensorBoard}) {
    if (name == FormatName(f)) return f;
  }
  if (name == "mindspeed" || name == "pangu") return LogFormat::kMegatron;
  std::string all;
  for (const auto& n : FormatNames()) all += (all.empty() ? "" : ", ") + n;
  return InvalidArgument("unknown log format \"" + name + "\"; expected one of: " + all);
}

namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Whether the first bytes look like a TFRecord (a TensorBoard event file) rather than text.
bool LooksLikeTfRecord(const char* data, size_t n) {
  return n >= 12 && TfRecordHeaderValid(reinterpret_cast<const unsigned char*>(data));
}

// A text log has (almost) no control bytes other than tab, CR, LF and ESC.
bool LooksBinary(const char* data, size_t n) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(data[i]);
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != 0x1b && c != '\f' && c != '\b') ++bad;
  }
  return n > 0 && bad * 10 > n;  // more than 10% control bytes
}

}  // namespace

Result<ParseResult> ParseLog(const std::filesystem::path& path, const ParseOptions& options) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return NotFound("log file not found: " + path.string())
        .WithHint("check the path; run_training writes <report_dir>/<side>_<config>_train.log");
  }
  if (options.format == LogFormat::kTensorBoard ||
      (options.format == LogFormat::kAuto &&
       (std::filesystem::is_directory(status) ||
        path.filename().string().find("tfevents") != std::string::npos))) {
    return ParseTensorBoard(path, options);
  }
  if (std::filesystem::is_directory(status)) {
    return InvalidArgument(path.string() + " is a directory, not a log file")
        .WithHint("pass the log file itself, or format=tensorboard for a directory of event files");
  }

  std::optional<UserRegex> regex;
  if (!options.regex.empty()) {
    PARITY_ASSIGN_OR_RETURN(UserRegex r, UserRegex::Compile(options.regex));
    regex = std::move(r);
  }

  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return Unavailable("cannot open " + path.string() + ": " + std::strerror(errno));
  }
  struct stat st {};
  ::fstat(fd.get(), &st);
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  ParseResult result;
  result.path = std::filesystem::absolute(path).lexically_normal().string();

  std::optional<Sha256> digest;
  if (options.sha256) digest.emplace();

  // A regular file is read through a guarded mapping (no copy into a buffer); what it grew
  // by since, and pipes and other files, through read(). Both hand the parser the same
  // blocks: at most kChunkBytes, cut after their last line end.
  std::unique_ptr<GuardedMapping> mapping;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    auto mapped = GuardedMapping::Map(fd.get(), static_cast<size_t>(st.st_size));
    // Not mapped (no slot left, no address space): read() gives the same result, slower.
    if (mapped.ok()) mapping = std::move(*mapped);
  }
  const auto shrank_error = [&]() {
    struct stat now {};
    ::fstat(fd.get(), &now);
    return FailedPrecondition("the log shrank while it was read: " + path.string() + " was " +
                              std::to_string(st.st_size) + " bytes when opened and is " +
                              std::to_string(now.st_size) + " bytes now (rotated or rewritten)")
        .WithHint("parse it again once the writer is done, or parse a copy");
  };

  std::unique_ptr<char[]> buffer(new char[kChunkBytes]);
  size_t carry = 0;
  uint64_t total = 0;
  size_t mapped_at = 0;  // bytes of the mapping handed to the loop
  bool first_block = true;
  bool ends_with_newline = true;
  std::optional<TextLogParser> parser;
  while (true) {
    if (options.cancel.cancelled()) return Cancelled("parse_log cancelled while reading " + path.string());
    const char* data = buffer.get();
    ssize_t n = 0;
    if (mapping) {
      data = mapping->data() + mapped_at - carry;
      n = static_cast<ssize_t>(std::min(kChunkBytes - carry, mapping->size() - mapped_at));
      if (n == 0) {
        if (mapping->shrank()) return shrank_error();
        std::memcpy(buffer.get(), data, carry);
        mapping.reset();
        if (::lseek(fd.get(), static_cast<off_t>(mapped_at), SEEK_SET) < 0) {
          return Unavailable("seeking " + path.string() + " to byte " + std::to_string(mapped_at) +
                             " failed: " + std::strerror(errno));
        }
        continue;
      }
      // The bytes before this block are done with: let them leave RSS, 32 MiB at a time.
      mapping->Release((mapped_at - carry) & ~((size_t{32} << 20) - 1));
      mapped_at += static_cast<size_t>(n);
    } else {
      n = ::read(fd.get(), buffer.get() + carry, kChunkBytes - carry);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Unavailable("reading " + path.string() + " failed at byte " + std::to_string(total) +
                           ": " + std::strerror(errno));
      }
    }
    if (digest && n > 0) digest->Update(std::string_view(data + carry, static_cast<size_t>(n)));
    total += static_cast<uint64_t>(n);
    const size_t have = carry + static_cast<size_t>(n);
    if (first_block) {
      first_block = false;
      if (have == 0) {
        return FailedPrecondition("log file is empty: " + path.string())
            .WithHint("the run may not have started yet, or its output went to another file");
      }
      if (options.format == LogFormat::kAuto && LooksLikeTfRecord(data, have)) {
        return ParseTensorBoard(path, options);
      }
      if (LooksBinary(data, std::min<size_t>(have, 65536))) {
        if (mapping && mapping->shrank()) return shrank_error();
        return InvalidArgument(path.string() + " is not a text training log: over 10% of its first " +
                               std::to_string(std::min<size_t>(have, 65536)) + " bytes are control bytes")
            .WithHint("for TensorBoard event files pass format=tensorboard");
      }
      parser.emplace(options, std::move(regex));
      parser->ExpectBytes(static_cast<uint64_t>(st.st_size));
    }
    if (n == 0) {
      if (carry > 0) {
        ends_with_newline = false;
        parser->Feed(data, data + carry);
      }
      break;
    }
    const void* last_nl = memrchr(data, '\n', have);
    size_t upto;
    if (last_nl) {
      upto = static_cast<const char*>(last_nl) - data + 1;
    } else if (have == kChunkBytes) {
      parser->NoteLongLine(kChunkBytes);
      upto = have;
    } else {
      carry = have;
      continue;
    }
    parser->Feed(data, data + upto);
    if (mapping && mapping->shrank()) return shrank_error();
    carry = have - upto;
    if (carry > 0 && !mapping) std::memmove(buffer.get(), buffer.get() + upto, carry);
    if (options.progress) options.progress(total, static_cast<uint64_t>(st.st_size));
  }
  if (!ends_with_newline) parser->MarkTruncatedLastLine();
  result.bytes = total;
  if (digest) result.sha256 = digest->HexDigest();
  return parser->Finish(std::move(result));
}

Result<std::vector<std::filesystem::path>> ExpandLogPaths(const std::vector<std::string>& patterns) {
  std::vector<std::filesystem::path> out;
  for (const auto& pattern : patterns) {
    const std::filesystem::path p(pattern);
    const std::string name = p.filename().string();
    if (name.find_first_of("*?[") == std::string::npos) {
      out.push_back(p);
      continue;
    }
    const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
    std::vector<std::filesystem::path> matches;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (::fnmatch(name.c_str(), it->path().filename().c_str(), 0) == 0) matches.push_back(it->path());
    }
    if (ec) return NotFound("cannot list " + dir.string() + " for pattern " + pattern + ": " + ec.message());
    if (matches.empty()) return NotFound("no file matches " + pattern);
    std::sort(matches.begin(), matches.end());
    out.insert(out.end(), matches.begin(), matches.end());
  }
  return out;
}

}  // namespace parity::logs
