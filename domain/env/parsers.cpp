#include "domain/env/parsers.h"

#include <cctype>
#include <cstdlib>
#include <regex>
#include <sstream>

namespace parity::env {

namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> out;
  std::string line;
  std::istringstream in{std::string(text)};
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

// "| a | b | c |" -> {"a", "b", "c"}
std::vector<std::string> Cells(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = line.find('|');
  while (start != std::string::npos) {
    size_t next = line.find('|', start + 1);
    if (next == std::string::npos) break;
    cells.push_back(Trim(std::string_view(line).substr(start + 1, next - start - 1)));
    start = next;
  }
  return cells;
}

// Whitespace tokens with "/" separated out and dropped: "54996/ 65536" -> {"54996", "65536"}.
std::vector<std::string> Numbers(const std::string& cell) {
  std::string spaced;
  for (char c : cell) spaced += (c == '/') ? ' ' : c;
  std::vector<std::string> tokens;
  std::istringstream in(spaced);
  std::string t;
  while (in >> t) tokens.push_back(t);
  return tokens;
}

std::optional<double> Number(const std::vector<std::string>& tokens, size_t i) {
  if (i >= tokens.size()) return std::nullopt;
  const std::string& t = tokens[i];
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end != '\0') return std::nullopt;
  return v;
}

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

void SetIf(json& j, const char* key, const std::optional<double>& v) {
  j[key] = v ? json(*v) : json(nullptr);
}

}  // namespace

NpuSmiInfo ParseNpuSmiInfo(std::string_view text) {
  NpuSmiInfo info;
  static const std::regex kVersion(R"(Version:\s*([0-9A-Za-z.\-]+))");
  bool in_process_table = false;
  NpuDevice* pending = nullptr;  // the device whose second row comes next
  for (const std::string& line : Lines(text)) {
    if (line.empty() || line[0] != '|') continue;
    std::smatch m;
    if (info.version.empty() && std::regex_search(line, m, kVersion)) info.version = m[1];
    std::vector<std::string> cells = Cells(line);
    if (cells.size() < 3) continue;
    if (cells[1].find("Process id") != std::string::npos) in_process_table = true;
    if (in_process_table) continue;
    std::istringstream first(cells[0]);
    std::string id, name;
    first >> id >> name;
    if (!AllDigits(id)) { pending = nullptr; continue; }
    if (!name.empty()) {
      NpuDevice d;
      d.npu = std::atoi(id.c_str());
      std::string rest;
      std::getline(first, rest);
      d.name = Trim(name + rest);
      d.health = cells[1];
      auto n = Numbers(cells[2]);
      d.power_w = Number(n, 0);
      d.temp_c = Number(n, 1);
      info.devices.push_back(std::move(d));
      pending = &info.devices.back();
    } else if (pending) {
      pending->chip = std::atoi(id.c_str());
      pending->bus_id = cells[1];
      auto n = Numbers(cells[2]);
      pending->aicore_pct = Number(n, 0);
      pending->memory_used_mb = Number(n, 1);
      pending->memory_total_mb = Number(n, 2);
      pending->hbm_used_mb = Number(n, 3);
      pending->hbm_total_mb = Number(n, 4);
      pending = nullptr;
    }
  }
  return info;
}

std::map<std::string, std::string> ParseVersionCfg(std::string_view text) {
  static const std::regex kLine(R"(^\s*([A-Za-z0-9_]+)_running_version=\[([^:\]]*):([^\]]*)\])");
  std::map<std::string, std::string> out;
  for (const std::string& line : Lines(text)) {
    std::smatch m;
    if (std::regex_search(line, m, kLine)) out[m[1]] = m[3];
  }
  return out;
}

std::map<std::string, std::string> ParseKeyValues(std::string_view text) {
  std::map<std::string, std::string> out;
  for (const std::string& line : Lines(text)) {
    std::string t = Trim(line);
    if (t.empty() || t[0] == '#') continue;
    size_t eq = t.find('=');
    if (eq == std::string::npos) continue;
    std::string value = Trim(std::string_view(t).substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    out[Trim(std::string_view(t).substr(0, eq))] = value;
  }
  return out;
}

std::vector<GpuDevice> ParseNvidiaSmiCsv(std::string_view text) {
  std::vector<GpuDevice> out;
  for (const std::string& line : Lines(text)) {
    std::vector<std::string> f;
    std::string field;
    std::istringstream in(line);
    while (std::getline(in, field, ',')) f.push_back(Trim(field));
    if (f.size() < 5 || !AllDigits(f[0])) continue;  // skips a header row and error text
    out.push_back({f[0], f[1], f[2], f[3], f[4]});
  }
  return out;
}

json ToJson(const NpuDevice& d) {
  json j = {{"npu", d.npu}, {"chip", d.chip}, {"name", d.name}, {"health", d.health}, {"bus_id", d.bus_id}};
  SetIf(j, "power_w", d.power_w);
  SetIf(j, "temp_c", d.temp_c);
  SetIf(j, "aicore_pct", d.aicore_pct);
  SetIf(j, "memory_used_mb", d.memory_used_mb);
  SetIf(j, "memory_total_mb", d.memory_total_mb);
  SetIf(j, "hbm_used_mb", d.hbm_used_mb);
  SetIf(j, "hbm_total_mb", d.hbm_total_mb);
  return j;
}

json ToJson(const GpuDevice& g) {
  return {{"index", g.index}, {"name", g.name}, {"memory_total_mib", g.memory_total_mib},
          {"memory_used_mib", g.memory_used_mib}, {"driver_version", g.driver_version}};
}

}  // namespace parity::env
