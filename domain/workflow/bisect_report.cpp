// bisect.json and bisect.md: the whole story of one `parity bisect` (bisect.h), built only
// from what the probes and the hunt returned.
#include <sstream>

#include "domain/workflow/bisect.h"

namespace parity::workflow {

using nlohmann::json;

namespace {

std::string Short(const std::string& commit) { return commit.substr(0, 12); }

json HuntJson(const BisectOutcome& o) {
  if (!o.hunt) return {{"ran", false}, {"why", o.hunt_skipped}};
  return {{"ran", true},
          {"verdict", o.hunt->verdict},
          {"explanation", o.hunt->explanation},
          {"located", o.hunt->located},
          {"baseline_commit", o.hunt->baseline_commit},
          {"candidate_commit", o.hunt->candidate_commit},
          {"outputs", o.hunt->report.value("outputs", json::object())},
          {"warnings", o.hunt->warnings}};
}

}  // namespace

json BisectJson(const BisectOutcome& o) {
  json probes = json::array();
  for (const auto& p : o.probes) {
    json j = {{"index", p.index}, {"history", p.history}, {"commit", p.commit}, {"subject", p.subject},
              {"verdict", p.verdict}, {"reason", p.reason}, {"report_dir", p.report_dir}, {"round", p.round},
              {"reproduce", p.report_dir + "/report/reproduce.json"}};
    if (!p.evidence.is_null()) j["evidence"] = p.evidence;
    if (!p.scheduler_job.empty()) j["slurm_job"] = p.scheduler_job;
    probes.push_back(std::move(j));
  }
  return {{"schema", "parity.bisect/1"},
          {"answer", o.answer},
          {"explanation", o.explanation},
          {"good_commit", o.good_commit},
          {"bad_commit", o.bad_commit},
          {"case", o.case_name},
          {"commits", o.commits},
          {"probes", probes},
          {"culprit", o.culprit},
          {"suspects", o.suspects},
          {"hunt", HuntJson(o)},
          {"trainings", o.trainings},
          {"probe_bound", o.probe_bound},
          {"jobs", o.jobs},
          {"warnings", o.warnings}};
}

std::string BisectMarkdown(const BisectOutcome& o) {
  std::ostringstream md;
  md << "# parity bisect: " << o.answer << "\n\n" << o.explanation << "\n\n";
  md << "- good " << Short(o.good_commit) << ", bad " << Short(o.bad_commit) << ", case " << o.case_name << "\n";
  md << "- " << o.commits.size() << " first-parent commit(s); " << o.probes.size() << " probe(s), " << o.trainings
     << " training(s) in all (the good side's checkpoint and run included); a binary search needs at most "
     << o.probe_bound << " probe(s) here (ceil(log2 n) + skipped)\n";
  if (!o.jobs.empty()) {
    md << "- Slurm jobs, in the order submitted (the good side's checkpoint and run first):";
    for (const auto& j : o.jobs) md << " " << j;
    md << "\n";
  }
  md << "\n";
  md << "## Commits tried\n\n| # | commit | subject | verdict | why | replay |\n|---|---|---|---|---|---|\n";
  for (const auto& p : o.probes) {
    std::string reason = p.reason;
    for (char& ch : reason) {
      if (ch == '|' || ch == '\n') ch = ' ';
    }
    md << "| " << p.index << (p.history == "first-parent" ? "" : " (" + p.history + ")") << " | " << Short(p.commit)
       << " | " << p.subject << " | " << p.verdict << " | " << reason << " | `parity reproduce " << p.report_dir
       << " --work-dir DIR` |\n";
  }
  md << "\n## History (oldest first)\n\n";
  for (const auto& c : o.commits) {
    md << "- " << c["index"].get<size_t>() << ". " << Short(c["commit"]) << " " << c["subject"].get<std::string>()
       << (c["merge"].get<bool>() ? " (merge)" : "") << "\n";
  }
  auto diff_of = [&](const json& c) {
    md << "\n### " << Short(c["commit"]) << " " << c["subject"].get<std::string>() << "\n\n";
    if (c["diff"].is_string()) md << "```diff\n" << c["diff"].get<std::string>() << "```\n";
  };
  if (o.culprit.is_object()) {
    md << "\n## The culprit\n";
    diff_of(o.culprit);
  }
  if (!o.suspects.empty()) {
    md << "\n## The commits it may be\n";
    for (const auto& s : o.suspects) diff_of(s);
  }
  md << "\n## The hunt (first divergent operator, line, hunk)\n\n";
  if (!o.hunt) {
    md << o.hunt_skipped << "\n";
  } else {
    md << "**" << o.hunt->verdict << "** — " << o.hunt->explanation << "\n";
    const json& at = o.hunt->located;
    if (at.is_object()) {
      md << "\n" << at.value("api", "") << " at " << at.value("file", "") << ":" << (at.contains("line") ? at["line"].dump() : "?")
         << "\n\n```\n" << at.value("code", "") << "\n```\n";
      if (at.contains("hunk") && at["hunk"].is_object()) {
        md << "\n```diff\n";
        for (const auto& line : at["hunk"].value("lines", json::array())) md << line.get<std::string>() << "\n";
        md << "```\n";
      }
    }
  }
  if (!o.warnings.empty()) {
    md << "\n## Warnings\n\n";
    for (const auto& w : o.warnings) md << "- " << w << "\n";
  }
  return md.str();
}

}  // namespace parity::workflow
