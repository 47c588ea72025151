#include "domain/logs/tfevents.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <string_view>

#include "domain/logs/crc32c.h"
#include "domain/logs/log_coverage.h"
#include "domain/logs/sha256.h"

namespace parity::logs {
namespace {

uint32_t LoadU32(const unsigned char* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
uint64_t LoadU64(const unsigned char* p) { return uint64_t(LoadU32(p)) | uint64_t(LoadU32(p + 4)) << 32; }

// A protobuf wire-format cursor over one message.
class Wire {
 public:
  explicit Wire(std::string_view data) : p_(reinterpret_cast<const unsigned char*>(data.data())), end_(p_ + data.size()) {}

  bool done() const { return p_ >= end_; }
  bool ok() const { return ok_; }

  // Reads the next field's number and wire type; false at the end or on malformed input.
  bool Next(uint32_t* field, uint32_t* wire_type) {
    if (done()) return false;
    uint64_t key = 0;
    if (!Varint(&key)) return false;
    *field = static_cast<uint32_t>(key >> 3);
    *wire_type = static_cast<uint32_t>(key & 7);
    return true;
  }
  bool Varint(uint64_t* out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) return Fail();
      const unsigned char b = *p_++;
      v |= uint64_t(b & 0x7F) << shift;
      if (!(b & 0x80)) {
        *out = v;
        return true;
      }
    }
    return Fail();
  }
  bool Fixed32(uint32_t* out) {
    if (end_ - p_ < 4) return Fail();
    *out = LoadU32(p_);
    p_ += 4;
    return true;
  }
  bool Fixed64(uint64_t* out) {
    if (end_ - p_ < 8) return Fail();
    *out = LoadU64(p_);
    p_ += 8;
    return true;
  }
  bool Bytes(std::string_view* out) {
    uint64_t n = 0;
    if (!Varint(&n) || n > static_cast<uint64_t>(end_ - p_)) return Fail();
    *out = std::string_view(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return true;
  }
  bool Skip(uint32_t wire_type) {
    uint64_t v;
    uint32_t w;
    std::string_view s;
    switch (wire_type) {
      case 0: return Varint(&v);
      case 1: return Fixed64(&v);
      case 2: return Bytes(&s);
      case 5: return Fixed32(&w);
      default: return Fail();  // groups (3, 4) do not occur in these messages
    }
  }

 private:
  bool Fail() {
    ok_ = false;
    p_ = end_;
    return false;
  }
  const unsigned char* p_;
  const unsigned char* end_;
  bool ok_ = true;
};

float AsFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
double AsDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

// tensorflow.TensorProto holding one scalar: dtype (1), tensor_content (4), float_val (5),
// double_val (6). Only DT_FLOAT (1) and DT_DOUBLE (2) are scalars worth comparing.
std::optional<double> DecodeScalarTensor(std::string_view bytes) {
  Wire w(bytes);
  uint32_t field, type;
  uint64_t dtype = 0;
  std::optional<double> value;
  std::string_view content;
  while (w.Next(&field, &type)) {
    if (field == 1 && type == 0) {
      if (!w.Varint(&dtype)) return std::nullopt;
    } else if (field == 4 && type == 2) {
      if (!w.Bytes(&content)) return std::nullopt;
    } else if (field == 5 && type == 5) {
      uint32_t bits;
      if (!w.Fixed32(&bits)) return std::nullopt;
      value = AsFloat(bits);
    } else if (field == 5 && type == 2) {
      std::string_view packed;
      if (!w.Bytes(&packed) || packed.size() < 4) return std::nullopt;
      value = AsFloat(LoadU32(reinterpret_cast<const unsigned char*>(packed.data())));
    } else if (field == 6 && type == 1) {
      uint64_t bits;
      if (!w.Fixed64(&bits)) return std::nullopt;
      value = AsDouble(bits);
    } else if (field == 6 && type == 2) {
      std::string_view packed;
      if (!w.Bytes(&packed) || packed.size() < 8) return std::nullopt;
      value = AsDouble(LoadU64(reinterpret_cast<const unsigned char*>(packed.data())));
    } else if (!w.Skip(type)) {
      return std::nullopt;
    }
  }
  if (!w.ok()) return std::nullopt;
  if (!value && !content.empty()) {
    const auto* c = reinterpret_cast<const unsigned char*>(content.data());
    if (dtype == 1 && content.size() >= 4) value = AsFloat(LoadU32(c));
    if (dtype == 2 && content.size() >= 8) value = AsDouble(LoadU64(c));
  }
  if (dtype != 0 && dtype != 1 && dtype != 2) return std::nullopt;
  return value;
}

// tensorflow.Summary.Value: tag (1), simple_value (2), tensor (8).
bool DecodeValue(std::string_view bytes, ScalarEvent& event) {
  Wire w(bytes);
  uint32_t field, type;
  std::optional<double> value;
  event.tag.clear();
  while (w.Next(&field, &type)) {
    std::string_view s;
    if (field == 1 && type == 2) {
      if (!w.Bytes(&s)) return false;
      event.tag.assign(s);
    } else if (field == 2 && type == 5) {
      uint32_t bits;
      if (!w.Fixed32(&bits)) return false;
      value = AsFloat(bits);
    } else if (field == 8 && type == 2) {
      if (!w.Bytes(&s)) return false;
      value = DecodeScalarTensor(s);
    } else if (!w.Skip(type)) {
      return false;
    }
  }
  if (!w.ok() || !value || event.tag.empty()) return false;
  event.value = *value;
  return true;
}

// tensorflow.Event: wall_time (1), step (2), summary (5). Returns false when malformed.
bool DecodeEvent(std::string_view bytes, const std::function<void(const ScalarEvent&)>& on_scalar) {
  Wire w(bytes);
  uint32_t field, type;
  ScalarEvent event;
  std::vector<std::string_view> values;
  while (w.Next(&field, &type)) {
    if (field == 1 && type == 1) {
      uint64_t bits;
      if (!w.Fixed64(&bits)) return false;
      event.wall_time = AsDouble(bits);
    } else if (field == 2 && type == 0) {
      uint64_t step;
      if (!w.Varint(&step)) return false;
      event.step = static_cast<int64_t>(step);
    } else if (field == 5 && type == 2) {
      std::string_view summary;
      if (!w.Bytes(&summary)) return false;
      Wire s(summary);
      uint32_t f, t;
      while (s.Next(&f, &t)) {
        std::string_view v;
        if (f == 1 && t == 2) {
          if (!s.Bytes(&v)) return false;
          values.push_back(v);
        } else if (!s.Skip(t)) {
          return false;
        }
      }
      if (!s.ok()) return false;
    } else if (!w.Skip(type)) {
      return false;
    }
  }
  if (!w.ok()) return false;
  for (auto v : values) {
    if (DecodeValue(v, event)) on_scalar(event);
  }
  return true;
}

struct TagMap {
  std::string_view metric;
  std::vector<std::string_view> tags;
};

// Where each trainer writes the metrics parity knows (torchtitan's metrics.py, Megatron's
// training_log, HF Trainer's TensorBoardCallback).
const std::vector<TagMap>& KnownTags() {
  static const std::vector<TagMap> tags = {
      {"loss", {"loss_metrics/global_avg_loss", "lm loss", "train/loss", "loss", "train_loss"}},
      {"grad_norm", {"grad_norm", "grad-norm", "train/grad_norm", "grad norm"}},
      {"lr", {"lr", "learning-rate", "train/learning_rate", "learning_rate"}},
      {"tps", {"throughput(tps)"}},
      {"tflops", {"tflops"}},
      {"mfu", {"mfu(%)"}},
      {"max_loss", {"loss_metrics/global_max_loss"}},
  };
  return tags;
}

}  // namespace

std::vector<std::filesystem::path> FindEventFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it.depth() > 4) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec) && it->path().filename().string().find("tfevents") != std::string::npos)
      files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool TfRecordHeaderValid(const unsigned char* first12) {
  return MaskCrc32c(Crc32c(first12, 8)) == LoadU32(first12 + 8);
}

Status ReadEventFile(const std::filesystem::path& path,
                     const std::function<void(const ScalarEvent&)>& on_scalar, EventFileStats& stats,
                     const std::function<void(std::string_view)>& on_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open event file " + path.string());
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.empty()) return FailedPrecondition("event file is empty: " + path.string());
  if (on_bytes) on_bytes(data);
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  size_t offset = 0;
  while (offset < data.size()) {
    if (data.size() - offset < 12) {
      stats.warnings.push_back({"truncated_record",
                                path.string() + ": the last record is cut off after its first " +
                                    std::to_string(data.size() - offset) +
                                    " bytes (the writer may still be running); it was ignored",
                                std::nullopt});
      break;
    }
    const uint64_t length = LoadU64(bytes + offset);
    if (MaskCrc32c(Crc32c(bytes + offset, 8)) != LoadU32(bytes + offset + 8)) {
      return FailedPrecondition(path.string() + ": TFRecord length CRC mismatch in record " +
                                std::to_string(stats.records + 1) + " at byte offset " +
                                std::to_string(offset) + "; the file is corrupted from there on")
          .WithHint("this is not a valid event file, or it was damaged; re-run with "
                    "--metrics.enable_tensorboard, or compare the text logs instead");
    }
    if (length > data.size() - offset - 12 || data.size() - offset - 12 - length < 4) {
      stats.warnings.push_back({"truncated_record",
                                path.string() + ": record " + std::to_string(stats.records + 1) +
                                    " at byte offset " + std::to_string(offset) + " is cut off (" +
                                    std::to_string(length) + " bytes announced, " +
                                    std::to_string(data.size() - offset - 12) +
                                    " present); the writer may still be running; it was ignored",
                                std::nullopt});
      break;
    }
    const unsigned char* payload = bytes + offset + 12;
    ++stats.records;
    if (MaskCrc32c(Crc32c(payload, length)) != LoadU32(payload + length)) {
      ++stats.skipped_records;
      stats.warnings.push_back({"crc_mismatch",
                                path.string() + ": record " + std::to_string(stats.records) +
                                    " at byte offset " + std::to_string(offset) +
                                    " fails its data CRC (corrupted); its values were skipped",
                                std::nullopt});
    } else if (!DecodeEvent(std::string_view(reinterpret_cast<const char*>(payload), length), on_scalar)) {
      ++stats.skipped_records;
      stats.warnings.push_back({"bad_event",
                                path.string() + ": record " + std::to_string(stats.records) +
                                    " is not a decodable tensorflow.Event; skipped",
                                std::nullopt});
    }
    offset += 12 + length + 4;
  }
  return Status::Ok();
}

Result<ParseResult> ParseTensorBoard(const std::filesystem::path& path, const ParseOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("TensorBoard path not found: " + path.string());
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_directory(path, ec)) {
    files = FindEventFiles(path);
    if (files.empty()) {
      return NotFound("no TensorBoard event file (*tfevents*) under " + path.string())
          .WithHint("torchtitan writes them with --metrics.enable_tensorboard under "
                    "<dump_folder>/<save_tb_folder>/<timestamp>/");
    }
  } else {
    files.push_back(path);
  }

  ParseResult result;
  result.path = std::filesystem::absolute(path).lexically_normal().string();
  result.format = LogFormat::kTensorBoard;
  result.text_log = false;
  const bool want_all =
      std::find(options.metrics.begin(), options.metrics.end(), "*") != options.metrics.end();
  std::vector<std::string> wanted = options.metrics;
  for (const auto& k : options.keywords) wanted.push_back(k);

  // Which metric a tag feeds: a known alias, or the tag's own name.
  std::map<std::string, std::string> tag_to_metric;
  std::map<std::string, KeyedSeries> series;
  std::map<std::string, std::string> metric_tag;
  auto metric_for = [&](const std::string& tag) -> const std::string* {
    auto it = tag_to_metric.find(tag);
    if (it != tag_to_metric.end()) return it->second.empty() ? nullptr : &it->second;
    std::string metric;
    for (const auto& known : KnownTags()) {
      if (std::find(known.tags.begin(), known.tags.end(), tag) != known.tags.end()) {
        metric = known.metric;
        break;
      }
    }
    if (std::find(wanted.begin(), wanted.end(), tag) != wanted.end()) metric = tag;
    if (metric.empty() && want_all) metric = tag;
    if (!metric.empty() && !want_all &&
        std::find(wanted.begin(), wanted.end(), metric) == wanted.end()) {
      metric.clear();
    }
    // Two aliases of one metric (say "loss" and "train/loss"): the first tag met wins.
    if (!metric.empty() && metric_tag.count(metric) && metric_tag[metric] != tag) metric.clear();
    if (!metric.empty()) metric_tag[metric] = tag;
    auto& slot = tag_to_metric[tag];
    slot = metric;
    return slot.empty() ? nullptr : &slot;
  };

  int64_t records = 0;
  std::optional<Sha256> digest;
  if (options.sha256) digest.emplace();
  for (const auto& file : files) {
    if (options.cancel.cancelled()) return Cancelled("parse_log cancelled while reading " + file.string());
    EventFileStats stats;
    PARITY_RETURN_IF_ERROR(ReadEventFile(
        file,
        [&](const ScalarEvent& e) {
          if (const std::string* metric = metric_for(e.tag)) series[*metric].Add(e.step, e.value, kExact);
        },
        stats, digest ? std::function<void(std::string_view)>([&](std::string_view b) { digest->Update(b); })
                      : std::function<void(std::string_view)>()));
    records += stats.records;
    for (auto& w : stats.warnings) result.warnings.push_back(std::move(w));
    std::error_code size_ec;
    result.bytes += std::filesystem::file_size(file, size_ec);
  }
  if (digest) result.sha256 = digest->HexDigest();
  if (files.size() > 1) {
    result.warnings.push_back({"several_event_files",
                               std::to_string(files.size()) + " event files were read and merged; "
                               "a step written by two runs appears as a duplicate",
                               std::nullopt});
  }
  for (const auto& [tag, metric] : tag_to_metric) result.available_metrics.push_back(tag);
  result.format_detail = std::to_string(records) + " event records in " + std::to_string(files.size()) +
                         " file(s); scalars are stored in full (float32/float64)";

  std::vector<std::string> order;
  if (want_all) {
    for (const auto& [name, s] : series) order.push_back(name);
  } else {
    order = wanted;
  }
  for (const auto& name : order) {
    auto it = series.find(name);
    if (it == series.end()) {
      std::string tags;
      for (const auto& t : result.available_metrics) tags += (tags.empty() ? "" : ", ") + t;
      result.warnings.push_back({"metric_not_found",
                                 "metric '" + name + "' has no TensorBoard tag in " + result.path +
                                     " (tags: " + tags + ")",
                                 std::nullopt});
      continue;
    }
    MetricResult m;
    m.name = name;
    m.source = "tensorboard:" + metric_tag[name];
    m.series = std::move(it->second);
    m.issues = Finalize(m.series);
    m.precision = SummarisePrecision(m.series);
    m.non_finite = CountNonFinite(m.series);
    result.metrics.push_back(std::move(m));
  }
  std::vector<ParseWarning> coverage_warnings;
  FillCoverage(result, options, std::nullopt, coverage_warnings);
  for (auto& w : coverage_warnings) result.warnings.push_back(std::move(w));
  return result;
}

}  // namespace parity::logs
