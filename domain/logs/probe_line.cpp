#include "domain/logs/probe_line.h"

#include <array>

namespace parity::logs {

namespace {

using json = nlohmann::json;

constexpr std::array<const char*, 4> kWhen = {"before", "after", "entry", "return"};

bool StartsWith(std::string_view text, size_t at, std::string_view token) {
  return text.substr(at, token.size()) == token;
}

// Fails with the field's name when it is absent or not a string.
bool StringField(const json& record, const char* field, std::string& out, std::string& error) {
  auto it = record.find(field);
  if (it == record.end()) {
    error = std::string("field \"") + field + "\" is missing";
    return false;
  }
  if (!it->is_string()) {
    error = std::string("field \"") + field + "\": expected string, got " + it->dump();
    return false;
  }
  out = it->get<std::string>();
  return true;
}

}  // namespace

std::string ProbeRecord::Key() const {
  return id + "|" + when + "|" + name + "|" + std::to_string(call) + "|" +
         (rank ? std::to_string(*rank) : std::string("-"));
}

void ProbeLog::Add(ProbeRecord record) {
  if (records.size() >= kMaxProbeRecords) {
    ++dropped;
    return;
  }
  records.push_back(std::move(record));
}

void ProbeLog::AddMalformed(int64_t line, std::string error) {
  if (malformed.size() < kMaxMalformedKept) malformed.push_back({line, std::move(error)});
  ++malformed_total;
}

std::string QuotePythonNonFinite(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 8);
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (StartsWith(text, i, "NaN")) {
      out += "\"nan\"";
      i += 2;
    } else if (StartsWith(text, i, "Infinity")) {
      out += "\"inf\"";
      i += 7;
    } else if (StartsWith(text, i, "-Infinity")) {
      out += "\"-inf\"";
      i += 8;
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<ProbeRecord> ReadProbeLine(std::string_view text, std::optional<int> line_rank,
                                         int64_t line_number, std::string& error) {
  const size_t marker = text.find(kProbeMarker);
  if (marker == std::string_view::npos) {
    error = "no PARITY_PROBE marker";
    return std::nullopt;
  }
  std::string_view body = text.substr(marker + kProbeMarker.size());
  while (!body.empty() && (body.front() == ' ' || body.front() == '\t')) body.remove_prefix(1);
  while (!body.empty() && (body.back() == ' ' || body.back() == '\t' || body.back() == '\r')) body.remove_suffix(1);
  if (body.empty() || body.front() != '{') {
    error = "expected a JSON object after PARITY_PROBE";
    return std::nullopt;
  }
  json record;
  try {
    record = json::parse(QuotePythonNonFinite(body));
  } catch (const json::exception& e) {
    error = std::string("the record is not valid JSON (cut off, or two lines interleaved?): ") + e.what();
    return std::nullopt;
  }
  return ProbeFromRecord(std::move(record), line_rank, line_number, error);
}

std::optional<ProbeRecord> ProbeFromRecord(json record, std::optional<int> line_rank, int64_t line_number,
                                           std::string& error) {
  if (!record.is_object()) {
    error = "the record is not a JSON object";
    return std::nullopt;
  }
  ProbeRecord out;
  out.line = line_number;
  if (!StringField(record, "id", out.id, error) || !StringField(record, "site", out.site, error) ||
      !StringField(record, "when", out.when, error) || !StringField(record, "name", out.name, error)) {
    return std::nullopt;
  }
  bool known_when = false;
  for (const char* w : kWhen) known_when = known_when || out.when == w;
  if (!known_when) {
    error = "field \"when\": expected before, after, entry or return, got \"" + out.when + "\"";
    return std::nullopt;
  }
  auto call = record.find("call");
  if (call == record.end() || !call->is_number_integer()) {
    error = call == record.end() ? "field \"call\" is missing" : "field \"call\": expected integer, got " + call->dump();
    return std::nullopt;
  }
  out.call = call->get<int64_t>();
  if (auto rank = record.find("rank"); rank != record.end()) {
    if (!rank->is_number_integer()) {
      error = "field \"rank\": expected integer, got " + rank->dump();
      return std::nullopt;
    }
    out.rank = rank->get<int64_t>();
  } else if (line_rank) {
    out.rank = *line_rank;
  }
  out.record = std::move(record);
  return out;
}

}  // namespace parity::logs
