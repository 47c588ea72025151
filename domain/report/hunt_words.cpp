#include "domain/report/hunt_words.h"

#include <charconv>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cmath>

namespace parity::report {

using json = nlohmann::json;

std::string ValueText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  if (v.is_number()) return ShortNumber(v);
  return v.dump();
}

namespace {

std::string Text(const json& v) { return ValueText(v); }

std::string Names(const json& rows, bool zh) {
  std::string out;
  size_t n = 0;
  for (const json& r : rows.is_array() ? rows : json::array()) {
    if (n == 3) {
      out += zh ? " 等 " + std::to_string(rows.size()) + " 项" : " and " + std::to_string(rows.size() - 3) + " more";
      break;
    }
    out += (n++ ? (zh ? "、" : ", ") : "") + Text(r.value("name", json()));
    std::string detail = r.value("detail", "");
    if (zh && detail.rfind("dtype ", 0) == 0) {  // "dtype A in the candidate, B in the baseline"
      size_t mid = detail.find(" in the candidate, ");
      size_t end = detail.find(" in the baseline");
      if (mid != std::string::npos && end != std::string::npos) {
        detail = "dtype 候选为 " + detail.substr(6, mid - 6) + "，基线为 " + detail.substr(mid + 19, end - mid - 19);
      }
    } else if (zh && detail.rfind("no baseline counterpart", 0) == 0) {
      detail = "基线中无对应";
    }
    if (!detail.empty()) out += (zh ? "（" : " (") + detail + (zh ? "）" : ")");
  }
  return out;
}

std::string Arguments(const json& rows, bool zh) {
  std::string out;
  for (const json& r : rows.is_array() ? rows : json::array()) {
    out += out.empty() ? "" : (zh ? "；" : "; ");
    out += Text(r.value("name", json()));
    if (r.contains("candidate") || r.contains("baseline")) {
      out += zh ? " 候选为 " + Text(r.value("candidate", json())) + "，基线为 " + Text(r.value("baseline", json()))
                : " is " + Text(r.value("candidate", json())) + " in the candidate, " + Text(r.value("baseline", json())) +
                      " in the baseline";
    }
  }
  return out;
}

// A decimal printed with `decimals` digits: the difference of two such numbers is a
// multiple of 10^-decimals, so it is printed with that many digits (trailing zeros cut).
std::string Decimal(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  // Only when the value is such a multiple (up to the double's own rounding).
  if (std::fabs(std::strtod(buf, nullptr) - v) > 1e-9 * std::max(1.0, std::fabs(v))) return ShortNumber(json(v));
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string MetricSentence(const std::string& name, const json& m, bool zh) {
  const std::string steps = Text(m.value("steps_compared", json()));
  const json& d = m.value("printed_decimals", json::object());
  const json dec = d.is_object() ? d.value("baseline", json()) : json();
  std::string digits;
  if (dec.is_number_integer()) {
    digits = zh ? "打印 " + Text(dec) + " 位小数，小于 " + Text(m.value("resolution", json())) + " 的差异在打印值中无法显示"
                : "printed with " + Text(dec) + " decimals: a difference below " + Text(m.value("resolution", json())) +
                      " cannot show in them";
  }
  const json& tol = m.value("tolerance", json());
  std::string tolerance = tol.is_object() && tol.value("abs", json()).is_number() ? Text(tol["abs"]) : "0";
  if (m.value("bitwise_equal", false)) {
    return zh ? name + " 在全部 " + steps + " 步逐位一致" : name + " is bitwise equal at all " + steps + " steps";
  }
  if (m.value("identical_as_printed", false)) {
    return zh ? name + " 在全部 " + steps + " 步打印值一致（" + digits + "）"
              : name + " is identical as printed at all " + steps + " steps (" + digits + ")";
  }
  const json& max_abs = m.value("max_abs", json());
  std::string diff = max_abs.is_number() && dec.is_number_integer() ? Decimal(max_abs.get<double>(), dec.get<int>())
                                                                    : Text(max_abs);
  std::string step = Text(m.value("max_abs_step", json()));
  std::string s = zh ? name + " 在第 " + step + " 步相差 " + diff + "，在容差 " + tolerance + " 之内"
                     : name + " differs by " + diff + " at step " + step + ", within the tolerance " + tolerance;
  if (!digits.empty()) s += zh ? "（" + digits + "）" : " (" + digits + ")";
  return s;
}

std::string Where(const json& located) {
  return Text(located.value("file", json())) + ":" + Text(located.value("line", json())) + " (" +
         Text(located.value("api", json())) + ")";
}

std::string HunkName(const json& hunk) { return Text(hunk.value("file", json())) + " " + Text(hunk.value("header", json())); }

}  // namespace

std::string ShortNumber(const json& v) {
  if (v.is_number_integer()) return v.dump();
  if (!v.is_number()) return v.is_string() ? v.get<std::string>() : v.dump();
  double x = v.get<double>();
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, end);
}

std::string CauseSentence(const json& fd, bool zh) {
  const json& cause = fd.value("cause", json());
  if (!cause.is_object()) return fd.value("explanation", "");
  if (!zh) return cause.value("sentence", "");
  const json& e = cause.value("evidence", json::object());
  const std::string api = fd.value("api", "");
  const std::string told = e.value("equal_means", "").find("statistics") != std::string::npos ? "（以 dump 的统计量为准）" : "";
  const std::string kind = cause.value("kind", "");
  if (kind == "unmatched") {
    return api + " 在基线 dump 中没有对应：候选在此处调用了基线没有调用的 API（调用序列发生了变化）。";
  }
  if (kind == "argument") {
    return api + " 的张量输入两侧一致" + told + "，但其非张量参数不同：" + Arguments(e.value("differing_arguments", json()), true) +
           "。该参数值即为分歧原因，关键在于它在何处被设置。";
  }
  if (kind == "operator") {
    return api + " 的输入与参数两侧一致" + told + "，输出 " + Names(e.value("differing_outputs", json()), true) +
           " 不同：算子本身的计算方式变了（kernel、dtype 或实现）。";
  }
  if (kind == "operands") {
    std::string s = api + " 之前的所有输出两侧一致" + told + "，但其张量输入 " + Names(e.value("differing_inputs", json()), true) +
                    " 不同：调用处传入了不同的操作数（调用行本身的改动，或最后一个被 dump 的算子与此调用之间未被 msprobe 记录的代码）";
    if (!e.value("differing_arguments", json::array()).empty()) {
      s += "；其参数也不同：" + Arguments(e["differing_arguments"], true);
    }
    return s + "。";
  }
  if (kind == "upstream") {
    return api + " 的张量输入 " + Names(e.value("differing_inputs", json()), true) + " 已经不同：之前的输出已有判据之内的差异（最早在 " +
           Text(e.value("earlier_difference", json())) + "），到此超出判据。";
  }
  return cause.value("sentence", "");
}

std::string TraceSentence(const json& trace, bool zh) {
  if (!trace.is_object()) return "";
  if (!zh) return trace.value("sentence", "");
  const json& hunks = trace.value("hunks", json::array());
  if (hunks.empty()) {
    return "从该行出发的追踪没有到达任何改动的 hunk，改动的 hunk 中也没有出现不同的取值；下面按与该行的距离列出本次提交范围内的全部 " +
           std::to_string(trace.value("all_hunks", json::array()).size()) + " 个改动 hunk。";
  }
  std::string s = "该取值在 " + HunkName(hunks[0]) + " 中被设置";
  std::string chain;
  for (const json& st : trace.value("chain", json::array())) {
    chain += (chain.empty() ? "" : " → ") + Text(st.value("file", json())) + ":" + Text(st.value("line", json()));
  }
  if (!chain.empty()) s += "；追踪链：" + chain;
  return s + "。";
}

std::string NoiseKindText(const json& n, bool zh) {
  const std::string kind = n.value("kind", "");
  if (!zh) return n.value("explanation", kind);
  if (kind == "crc_after_inplace") {
    return std::string(n.value("hashed_late_on", "") == "candidate" ? "候选" : "基线") + "一侧记录的 CRC 等于其后原位操作 " +
           Text(n.value("later_row", json())) + " 的输出（两侧一致）的 CRC：msprobe 在后台线程计算 CRC 时张量已被原位改写。噪声，不是分歧。";
  }
  if (kind == "crc_unconfirmed") return "CRC 不同但钩子中同步计算的统计量一致，且之后没有任何行再次出现该差异：不计为分歧。";
  if (kind == "masked_input") return "输入不同，但算子的所有输出两侧一致：差异被算子屏蔽，之后的代码看不到它。";
  return n.value("explanation", kind);
}

std::string HuntVerdictName(const std::string& verdict, bool zh) {
  if (!zh) return verdict;
  if (verdict == "no divergence") return "无分歧";
  if (verdict == "inputs equal, output differs") return "输入一致，输出不同";
  if (verdict == "argument differs") return "参数不同";
  if (verdict == "first divergent probe") return "首个分歧探针";
  if (verdict == "inconclusive") return "无法判定";
  return verdict;
}

std::string HuntSentence(const json& hunt, bool zh) {
  if (!zh) return hunt.value("explanation", "");
  const std::string verdict = hunt.value("verdict", "");
  const json& located = hunt.value("located", json());
  const json& probe = located.is_object() ? located.value("probe", json()) : json();
  std::string s;
  if (verdict == "no divergence") {
    const json& metrics = hunt.value("compare", json::object()).value("metrics", json());
    if (metrics.is_object() && !metrics.empty()) {
      for (const auto& [name, m] : metrics.items()) s += (s.empty() ? "" : "；") + MetricSentence(name, m, true);
      return s + "。";
    }
    return "日志的打印精度不足以判定，msprobe dump 中也没有分歧 API（" + hunt.value("explanation", "") + "）。";
  }
  if (!located.is_object()) return "无法判定，原因（英文）：" + hunt.value("explanation", "");
  const json& cause = located.value("cause", json());
  std::string tail;
  if (cause.is_object()) {
    const json& hunk = located.value("hunk", json());
    if (located.value("in_changed_hunk", false) && hunk.is_object()) tail = "该行位于改动 " + HunkName(hunk) + " 中。";
    else if (located.value("trace", json()).is_object()) tail = TraceSentence(located["trace"], true);
  }
  const std::string name = probe.is_object() ? Text(probe.value("name", json())) : "-";
  if (verdict == "inputs equal, output differs") {
    s = Where(located) + "：语句之前探测的所有输入两侧一致，其输出 " + name + " 不同。";
  } else if (verdict == "argument differs") {
    s = Where(located) + "：张量输入两侧一致，参数不同";
    if (probe.is_object() && probe.value("when", "") == "before") {
      s += "：" + name + " 候选为 " + Text(probe.value("candidate", json::object()).value("value", json())) + "，基线为 " +
           Text(probe.value("baseline", json::object()).value("value", json()));
    }
    s += "。";
  } else if (verdict == "first divergent probe") {
    const std::string when = located.value("when", "");
    s = "首个分歧探针是 " + Text(located.value("site", json())) + " 处的 " + name + "（" + when + "）";
    s += when == "entry" ? "：函数被调用时该参数已经不同，差异产生于调用方。" : "：在它之前探测的所有值（包括函数入口的参数）两侧一致。";
  } else {
    return "无法判定，原因（英文）：" + hunt.value("explanation", "");
  }
  return s + tail;
}

void AddHuntIterations(const json& hunt, bool zh, Document& doc) {
  const json& iterations = hunt.value("iterations", json());
  if (!iterations.is_array() || iterations.empty()) return;
  doc.blocks.emplace_back();
  Block& h = doc.blocks.back();
  h.kind = Block::Kind::kHeading;
  h.level = 3;
  h.text = zh ? "探针迭代" : "Probe iterations";
  doc.blocks.emplace_back();
  Block& t = doc.blocks.back();
  t.kind = Block::Kind::kTable;
  t.monospace = true;
  t.header = zh ? std::vector<std::string>{"轮次", "阶段", "探测位置（候选）", "探针 匹配/分歧", "首个分歧探针", "扰动检查 基线/候选"}
                : std::vector<std::string>{"iteration", "phase", "targets (candidate)", "probes matched/divergent",
                                           "first divergent probe", "perturbation baseline/candidate"};
  for (const json& it : iterations) {
    std::string targets;
    const json candidates = it.value("targets", json::object()).value("candidate", json::array());
    for (const json& x : candidates) {
      targets += (targets.empty() ? "" : ", ") + Text(x.value("file", json())) + ":" + Text(x.value("line", json()));
    }
    const json& probes = it.value("probes", json::object());
    const json& first = probes.value("first_divergent", json());
    std::string first_text = first.is_object() ? Text(first.value("site", json())) + " " + Text(first.value("when", json())) + " " +
                                                     Text(first.value("name", json()))
                                               : (zh ? "无" : "none");
    const json& pert = it.value("perturbation", json::object());
    std::string phase = it.value("phase", "");
    if (zh) phase = phase == "statement" ? "语句" : phase == "stack functions" ? "调用栈函数" : phase;
    t.rows.push_back({Text(it.value("iteration", json())), phase, targets,
                      Text(probes.value("matched", json())) + "/" + Text(probes.value("divergent_count", json())), first_text,
                      Text(pert.value("baseline", json::object()).value("verdict", json())) + "/" +
                          Text(pert.value("candidate", json::object()).value("verdict", json()))});
  }
}

}  // namespace parity::report
