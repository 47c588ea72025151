// The hunt's conclusions, each sentence built from the evidence it states: compare_logs'
// per-metric figures, the probes' records, msprobe_first_diff's cause and value trace.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "domain/workflow/hunt_loop.h"

namespace parity::workflow::hunt_internal {

namespace {

std::string Number(const json& v) {
  if (v.is_number()) return v.dump();  // nlohmann prints the shortest text that reads back
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// The difference of two values printed with d decimals is a multiple of 10^-d: printed with
// d digits it is exact (0.00021, not 0.00021000000000004349).
std::string Difference(const json& m) {
  const json& v = m.value("max_abs", json());
  const json d = m.value("printed_decimals", json::object()).value("baseline", json());
  if (!v.is_number_float() || !d.is_number_integer() || m.value("full_precision", false)) return Number(v);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", d.get<int>(), v.get<double>());
  // Only when the value is such a multiple (up to the double's own rounding).
  if (std::fabs(std::strtod(buf, nullptr) - v.get<double>()) > 1e-9 * std::max(1.0, std::fabs(v.get<double>()))) {
    return Number(v);
  }
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string Decimals(const json& m) {
  const json& d = m.value("printed_decimals", json::object());
  const json b = d.value("baseline", json()), c = d.value("candidate", json());
  if (b.is_null() && c.is_null()) return "";
  std::string digits = b == c || c.is_null() ? Number(b) : (b.is_null() ? Number(c) : Number(b) + "/" + Number(c));
  std::string out = "printed with " + digits + " decimals";
  const json& r = m.value("resolution", json());
  if (r.is_number() && r.get<double>() > 0) out += ": a difference below " + Number(r) + " cannot show in them";
  return out;
}

std::string Tolerance(const json& m) {
  const json& t = m.value("tolerance", json());
  if (!t.is_object()) return m.value("bitwise_mode", false) ? "0 (bitwise)" : "of the preset";
  std::string out;
  if (t.value("abs", json()).is_number()) out += "abs " + Number(t["abs"]);
  if (t.value("rel", json()).is_number()) out += (out.empty() ? "" : " + ") + std::string("rel ") + Number(t["rel"]);
  return out.empty() ? "0" : out;
}

// A compared probe ({baseline, candidate} records) of a tensor.
bool IsTensorProbe(const json& probe) {
  const json& b = probe.value("baseline", json::object());
  return b.is_object() && b.value("type", "").find("Tensor") != std::string::npos;
}

// "dir/file.py:37" within the hunk's new lines.
bool SiteInHunk(const std::string& site, const json& hunk) {
  const size_t colon = site.rfind(':');
  if (!hunk.is_object() || colon == std::string::npos || site.substr(0, colon) != hunk.value("file", "")) return false;
  const int line = std::atoi(site.c_str() + colon + 1);
  const int start = hunk.value("new_start", 0), count = hunk.value("new_lines", 0);
  return line >= start && line < start + count;
}

}  // namespace

std::string LogsWithinTolerance(const json& compared) {
  const json& metrics = compared.value("metrics", json::object());
  std::string out;
  for (const auto& [name, m] : metrics.items()) {
    if (!m.is_object()) continue;
    const std::string steps = std::to_string(m.value("steps_compared", 0));
    std::string part;
    if (m.value("bitwise_equal", false)) {
      part = name + " is bitwise equal at all " + steps + " steps";
    } else if (m.value("identical_as_printed", false)) {
      part = name + " is identical as printed at all " + steps + " steps";
      if (std::string d = Decimals(m); !d.empty()) part += " (" + d + ")";
    } else {
      part = name + " differs by " + Difference(m) + " at step " +
             Number(m.value("max_abs_step", json())) + ", within the tolerance " + Tolerance(m);
      if (std::string d = Decimals(m); !d.empty()) part += " (" + d + ")";
    }
    out += (out.empty() ? "" : "; ") + part;
  }
  if (out.empty()) return "loss and grad norm pass compare_logs (" + compared.value("verdict_reason", "") + ")";
  return out;
}

json MetricFigures(const json& compared) {
  json out = json::object();
  const json metrics = compared.value("metrics", json::object());  // held: items() views it
  for (const auto& [name, m] : metrics.items()) {
    if (!m.is_object()) continue;
    json f = json::object();
    for (const char* k : {"steps_compared", "bitwise_equal", "identical_as_printed", "full_precision", "max_abs",
                          "max_abs_step", "tolerance", "printed_decimals", "resolution"}) {
      if (m.contains(k)) f[k] = m[k];
    }
    out[name] = f;
  }
  return out;
}

std::string PrintedDigitsWarning(const json& check) {
  const std::string format = check.value("baseline", json::object()).value("format", "log");
  std::string digits;
  const json metrics = check.value("metrics", json::object());  // held: items() views it
  for (const auto& [name, m] : metrics.items()) {
    if (!m.is_object() || m.value("full_precision", false)) continue;
    const json& d = m.value("printed_decimals", json::object()).value("baseline", json());
    digits += (digits.empty() ? "" : ", ") + name + " " + Number(d) + " decimals";
  }
  std::string out = "the instrumented runs reproduce the uninstrumented runs' loss and grad norm as the " + format +
                    " log prints them (" + digits + "); a difference smaller than half a unit of the last printed "
                    "digit cannot show there, so the probes are trusted as far as those digits go";
  if (format == "torchtitan" || format == "torchtitan-npu") {
    out += " (torchtitan's --metrics.enable_tensorboard writes them at full precision, which parity reads)";
  } else if (format == "megatron") {
    out += " (Megatron/MindSpeed print a fixed number of digits; their --tensorboard-dir writes full-precision "
           "values, which parity reads)";
  }
  return out;
}

std::string ProbeValue(const json& record) {
  if (!record.is_object()) return record.dump();
  if (record.contains("value")) return record["value"].is_string() ? record["value"].get<std::string>() : record["value"].dump();
  std::string out = record.value("dtype", "") + " " + (record.contains("shape") ? record["shape"].dump() : "");
  if (record.value("hash", "").size() >= 12) out += " sha256 " + record["hash"].get<std::string>().substr(0, 12);
  return out;
}

std::string Hunt::MsprobeCauseWords() const {
  const json& cause = located_.value("cause", json());
  if (!cause.is_object()) return "";
  std::string s = "msprobe_first_diff: " + cause.value("sentence", "");
  const json& hunk = located_.value("hunk", json());
  if (located_.value("in_changed_hunk", false) && hunk.is_object()) {
    s += "; the line is in the change " + hunk.value("file", "") + " " + hunk.value("header", "");
  } else if (located_.value("trace", json()).is_object()) {
    s += "; " + located_["trace"].value("sentence", "");
  }
  return s;
}

void Hunt::ConcludeAtStatement(const json& first, bool output, bool within_before) {
  const std::string at = located_.value("file", "") + ":" + std::to_string(located_.value("line", 0)) + " (" +
                         located_.value("api", "") + ")";
  const std::string msprobe = MsprobeCauseWords();
  const json& cause = located_.value("cause", json());
  const bool argument = cause.is_object() && cause.value("kind", "") == "argument";
  const bool set_elsewhere = !located_.value("in_changed_hunk", false) && located_.value("hunk", json()).is_object();
  const std::string within =
      within_before ? " within debug.trace_threshold (" + json(c_.trace_threshold).dump() + ")" : "";
  if (output) {
    std::string s = at + ": every input probed before the statement is equal on both sides" + within + ", its output " +
                    first.value("name", "") + " differs";
    if (!msprobe.empty()) s += "; " + msprobe;
    Conclude(argument && set_elsewhere ? kHuntArgument : kHuntOperator, s);
    return;
  }
  std::string s = at + ": every tensor probed before the statement is equal on both sides" + within + ", and the "
                  "value " + first.value("name", "") + " differs (" + ProbeValue(first.value("candidate", json())) +
                  " in the candidate, " + ProbeValue(first.value("baseline", json())) + " in the baseline)";
  if (!msprobe.empty()) s += "; " + msprobe;
  Conclude(kHuntArgument, s);
}

void Hunt::ConcludeInStack(const json& first, const std::string& site, const std::string& when) {
  const std::string name = first.value("name", "");
  const std::string values = " (" + ProbeValue(first.value("candidate", json())) + " in the candidate, " +
                             ProbeValue(first.value("baseline", json())) + " in the baseline)";
  const std::string msprobe = MsprobeCauseWords();
  std::string s;
  if (when == "entry") {
    s = "the first divergent probe is argument " + name + " at the entry of the function at " + site + values +
        ": it already differs when that function is called, so the difference arises before, in its caller";
  } else {
    s = "the first divergent probe is " + std::string(when == "return" ? "the result " : "") + name + " (" + when +
        ") at " + site + values + ": every value probed before it, the function's arguments at its entry included, "
        "is equal on both sides";
    const json& hunk = located_.value("hunk", json());
    if (SiteInHunk(site, hunk) && located_.value("in_changed_hunk", false)) {
      s += "; that line is in the change " + hunk.value("file", "") + " " + hunk.value("header", "") +
           ", which also holds the line msprobe names";
    } else if (located_.value("trace", json()).is_object() && !located_.value("in_changed_hunk", false)) {
      s += "; the function's own line did not change, and the value that differs is set elsewhere";
    } else if (!IsTensorProbe(first)) {
      s += "; the value is not a tensor: it is read from state the function was given (an attribute, a global, a "
           "configuration)";
    } else {
      s += "; the difference arises inside the function, or in state it reads that no probe saw (attributes, "
           "globals, configuration)";
    }
  }
  if (!msprobe.empty()) s += "; " + msprobe;
  Conclude(kHuntProbe, s);
}

}  // namespace parity::workflow::hunt_internal
