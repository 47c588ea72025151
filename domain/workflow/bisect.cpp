#include "domain/workflow/bisect.h"

#include <cstdio>
#include <fstream>

#include "domain/ledger/ledger.h"
#include "domain/workflow/bisect_git.h"
#include "domain/workflow/bisect_probe.h"
#include "support/subprocess.h"
#include "support/safe_file.h"

namespace parity::workflow {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string Short(const std::string& commit) { return commit.substr(0, 12); }

Status WriteFile(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Unavailable("cannot create " + path.parent_path().string() + ": " + ec.message());
  return WriteFileAtomic(path, text);
}

size_t CeilLog2(size_t n) {
  size_t k = 0;
  while ((size_t{1} << k) < n) ++k;
  return k;
}

// The hunt's steps shown as sub-steps of the bisect's last one ("4/4 hunt 3/7: ...").
class HuntSteps : public PipelineObserver {
 public:
  explicit HuntSteps(PipelineObserver& outer) : outer_(outer) {}
  void Step(size_t index, size_t total, std::string_view title) override {
    outer_.Step(4, 4, "hunt " + std::to_string(index) + "/" + std::to_string(total) + ": " + std::string(title));
  }
  void Note(std::string_view line) override { outer_.Note(line); }

 private:
  PipelineObserver& outer_;
};

class Bisect {
 public:
  Bisect(const PremergeConfig& c, const BisectOptions& o, StepRunner& r, PipelineObserver& obs)
      : c_(c), o_(o), run_(r), obs_(obs), git_(c.repo) {}

  Result<BisectOutcome> Run() {
    obs_.Step(1, 4, "the history, the uncommitted files and the environment");
    PARITY_ASSIGN_OR_RETURN(std::vector<HistoryCommit> history, History());
    PARITY_ASSIGN_OR_RETURN(MatrixEntry entry, Entry());
    out_.case_name = entry.name;
    prober_.emplace(c_, entry, top_, run_, obs_, o_.cancel, o_.keep_worktrees);
    PARITY_RETURN_IF_ERROR(Classes());

    obs_.Step(2, 4, "the good commit " + Short(out_.good_commit) + " (initial checkpoint and reference run)");
    PARITY_RETURN_IF_ERROR(prober_->RunGood(out_.good_commit));
    verdicts_[out_.good_commit] = ProbeVerdict::kSame;

    PARITY_ASSIGN_OR_RETURN(BisectAnswer answer, Search("first-parent", history));
    size_t skips = 0;
    for (const auto& p : out_.probes) skips += p.verdict == "skip";
    out_.probe_bound = CeilLog2(history.size()) + skips;
    PARITY_RETURN_IF_ERROR(Conclude(answer, history));

    if (o_.into_merges && out_.answer == "found" && out_.culprit.value("merge", false)) {
      PARITY_RETURN_IF_ERROR(IntoMerge());
    }
    if (out_.culprit.is_object()) Hunt();
    return Finish();
  }

 private:
  Result<std::vector<HistoryCommit>> History() {
    PARITY_ASSIGN_OR_RETURN(std::string top, Toplevel());
    top_ = top;
    std::string good_ref = o_.good.value_or(c_.baseline), bad_ref = o_.bad.value_or(c_.candidate);
    if (good_ref.empty()) return InvalidArgument("no good commit: give --good or the config's baseline");
    PARITY_ASSIGN_OR_RETURN(out_.good_commit, git_.Resolve(good_ref));
    PARITY_ASSIGN_OR_RETURN(out_.bad_commit, git_.Resolve(bad_ref));
    PARITY_ASSIGN_OR_RETURN(bool ancestor, git_.IsAncestor(out_.good_commit, out_.bad_commit));
    if (!ancestor) {
      return FailedPrecondition("the good commit " + good_ref + " (" + Short(out_.good_commit) +
                                ") is not an ancestor of the bad commit " + bad_ref + " (" + Short(out_.bad_commit) + ")")
          .WithHint("bisect searches the history from good to bad: give a good commit the bad one contains");
    }
    PARITY_ASSIGN_OR_RETURN(auto history, git_.FirstParentRange(out_.good_commit, out_.bad_commit));
    if (history.empty()) {
      return FailedPrecondition("there is no commit between " + good_ref + " and " + bad_ref + " (the same commit)");
    }
    if (history.front().parents.empty() || history.front().parents[0] != out_.good_commit) {
      Warn("the first commit of the range, " + Short(history.front().commit) + ", is not a child of the good commit: "
           "its first parent is " + (history.front().parents.empty() ? std::string("none") : Short(history.front().parents[0])));
    }
    for (size_t i = 0; i < history.size(); ++i) {
      out_.commits.push_back({{"index", i + 1}, {"commit", history[i].commit}, {"subject", history[i].subject},
                              {"merge", history[i].merge()}});
    }
    obs_.Note(good_ref + " " + Short(out_.good_commit) + " .. " + bad_ref + " " + Short(out_.bad_commit) + ": " +
              std::to_string(history.size()) + " first-parent commit(s), ~" + std::to_string(CeilLog2(history.size())) +
              " training(s) to search them");
    return history;
  }

  Result<std::string> Toplevel() {
    ProcessOptions o;
    o.argv = {"git", "-C", c_.repo.string(), "rev-parse", "--show-toplevel"};
    o.env_set = {{"GIT_OPTIONAL_LOCKS", "0"}};
    PARITY_ASSIGN_OR_RETURN(ProcessResult r, RunProcess(o));
    if (!r.success()) return ProcessFailure("finding the repository of " + c_.repo.string(), o, r);
    std::string top = r.out;
    while (!top.empty() && (top.back() == '\n' || top.back() == '\r')) top.pop_back();
    return top;
  }

  Result<MatrixEntry> Entry() {
    if (c_.configs.empty()) {
      return InvalidArgument("the config names no `configs`: bisect needs the config to train")
          .WithHint("list it in `configs`, e.g. [\"toy_small\"], or pick one with --case");
    }
    if (!o_.case_name) return c_.configs.front();
    for (const auto& e : c_.configs) {
      if (e.name == *o_.case_name) return e;
    }
    return InvalidArgument("--case " + *o_.case_name + " is not one of the config's `configs`");
  }

  // Only the uncommitted files need an answer: a committed file is part of its probe.
  Status Classes() {
    json args = {{"action", "diff"}, {"repo", top_.string()}, {"baseline", out_.good_commit},
                 {"candidate", out_.bad_commit}, {"report_dir", c_.report_dir.string()}};
    auto diff = run_.Call("audit_workspace", args);
    if (!diff.ok()) return std::move(diff).take_status().Context("audit_workspace");
    std::map<std::string, std::string> chosen;
    json unconfirmed = json::array();
    for (const auto& f : (*diff)["diff"]["files"]) {
      if (f.value("origin", "") == "committed") continue;
      std::string path = f["path"];
      if (c_.confirm.classes && c_.confirm.classes->count(path)) {
        chosen[path] = c_.confirm.classes->at(path);
        continue;
      }
      chosen[path] = f["proposed"];
      unconfirmed.push_back({{"path", path}, {"proposed", f["proposed"]}, {"reason", f.value("reason", "")},
                             {"allowed", f["allowed"]}});
    }
    if (!unconfirmed.empty() && !c_.confirm.classes_proposed && !o_.assume_yes) {
      return FailedPrecondition("the class of every uncommitted file needs the user's confirmation, and the config "
                                "does not give it; nothing was created or run")
          .WithHint("set confirm.classes to {\"<path>\": \"B|C|ignore\"} for the files listed, or to \"proposed\", or "
                    "run with --yes to accept parity's proposal")
          .WithEvidence("found", unconfirmed.dump(2));
    }
    for (const auto& [path, cls] : chosen) {
      obs_.Note("uncommitted " + path + ": class " + cls + (cls == "B" ? " (copied into every probe)" : ""));
      if (cls == "C") Warn(path + " is class C (candidate-only uncommitted code): it belongs to no commit, so no probe has it");
    }
    prober_->SetUncommittedClasses(chosen);
    return Environment();
  }

  // As the premerge's step 1: anomalies stop the bisect unless the user accepted them.
  Status Environment() {
    auto env = run_.Call("probe_env", {{"report_dir", c_.report_dir.string()}});
    if (!env.ok()) return std::move(env).take_status().Context("probe_env");
    const json anomalies = (*env).value("anomalies", json::array());
    for (const auto& a : anomalies) Warn("environment anomaly " + a.value("code", "?") + ": " + a.value("message", ""));
    if (!anomalies.empty() && !c_.confirm.environment_anomalies && !o_.assume_yes) {
      return FailedPrecondition(std::to_string(anomalies.size()) + " environment anomal" +
                                (anomalies.size() == 1 ? "y needs" : "ies need") + " the user's confirmation, and the "
                                "config does not give it; nothing was trained")
          .WithHint("set confirm.environment_anomalies to true once the user has judged them, or run with --yes")
          .WithEvidence("found", anomalies.dump(2));
    }
    return Status::Ok();
  }

  // One binary search over `commits` (index 0 = base, taken as matching the good numbers).
  Result<BisectAnswer> Search(const std::string& label, const std::vector<HistoryCommit>& commits) {
    BisectSearch search(commits.size());
    for (size_t i = 0; i < commits.size(); ++i) {  // what an earlier search already proved
      auto known = verdicts_.find(commits[i].commit);
      if (known != verdicts_.end()) search.Record(i + 1, known->second);
    }
    const size_t k = o_.parallel < 1 ? 1 : o_.parallel;
    while (!search.Done()) {
      std::vector<size_t> next = search.Next(k);
      ++round_;
      std::string title = label + " search: " + std::to_string(search.CandidatesLeft()) + " commit(s) left, ~" +
                          std::to_string(search.ProbesLeftEstimate()) + " training(s); probing";
      std::vector<ProbeRequest> batch;
      for (size_t i : next) {
        char name[16];
        std::snprintf(name, sizeof name, "%02zu-", ++seq_);
        batch.push_back({commits[i - 1].commit, name + Short(commits[i - 1].commit)});
        title += " " + Short(commits[i - 1].commit);
      }
      obs_.Step(3, 4, title);
      PARITY_ASSIGN_OR_RETURN(std::vector<ProbeResult> results, prober_->Probe(batch));
      for (size_t j = 0; j < next.size(); ++j) {
        const HistoryCommit& hc = commits[next[j] - 1];
        ProbeResult& r = results[j];
        search.Record(next[j], r.verdict);
        verdicts_[hc.commit] = r.verdict;
        for (auto& w : r.warnings) Warn(w);
        BisectProbe p{next[j], label, hc.commit, hc.subject, ProbeVerdictName(r.verdict), r.reason, r.evidence,
                      r.report_dir.string(), round_, r.scheduler_job};
        obs_.Note("probe " + batch[j].label + " \"" + hc.subject + "\": " + p.verdict + " — " + p.reason);
        out_.probes.push_back(std::move(p));
      }
    }
    for (const auto& [d, s] : search.NonMonotonic()) {
      Warn("commit " + Short(commits[s - 1].commit) + " matches the good numbers again after " +
           Short(commits[d - 1].commit) + " changed them (a later commit restores them); the search follows the "
           "oldest differing commit");
    }
    return search.Answer();
  }

  json CommitJson(const HistoryCommit& hc) {
    json j = {{"commit", hc.commit}, {"subject", hc.subject}, {"merge", hc.merge()},
              {"parent", hc.parents.empty() ? json() : json(hc.parents[0])}};
    auto diff = git_.ShowDiff(hc.commit);
    j["diff"] = diff.ok() ? json(*diff) : json();
    if (!diff.ok()) Warn("the diff of " + Short(hc.commit) + " could not be read: " + diff.status().ToString());
    return j;
  }

  Status Conclude(const BisectAnswer& a, const std::vector<HistoryCommit>& history) {
    out_.answer = BisectAnswerName(a.kind);
    auto at = [&](size_t i) { return i == 0 ? out_.good_commit : history[i - 1].commit; };
    switch (a.kind) {
      case BisectAnswer::Kind::kFound:
        out_.culprit = CommitJson(history[a.hi - 1]);
        out_.explanation = "the first commit whose numbers differ from the good one is " + Short(at(a.hi)) + " \"" +
                           history[a.hi - 1].subject + "\": its parent " + Short(at(a.lo)) + " matches them";
        break;
      case BisectAnswer::Kind::kSkippedRange:
        for (size_t i = a.lo + 1; i <= a.hi; ++i) out_.suspects.push_back(CommitJson(history[i - 1]));
        out_.explanation = "the first differing commit is one of " + std::to_string(a.hi - a.lo) + " commits after " +
                           Short(at(a.lo)) + " (which matches): " + std::to_string(a.skipped.size()) +
                           " skipped (they do not build or run) and " + Short(at(a.hi)) + ", which differs";
        break;
      case BisectAnswer::Kind::kNoChange:
        out_.explanation = "no commit changes the numbers: the bad commit " + Short(out_.bad_commit) +
                           " matches the good one under the rule (" + std::to_string(out_.probes.size()) +
                           " commit(s) probed, none differs)";
        break;
      case BisectAnswer::Kind::kUnknown:
        for (size_t i = a.lo + 1; i <= a.hi; ++i) out_.suspects.push_back(CommitJson(history[i - 1]));
        out_.explanation = "undecided: the commits after " + Short(at(a.lo)) + " up to the bad commit do not build or "
                           "run, so whether (and where) the numbers change there is not known";
        break;
    }
    obs_.Note("answer: " + out_.explanation);
    return Status::Ok();
  }

  // The culprit is a merge: search its merged branch (first-parent, fork point excluded).
  Status IntoMerge() {
    const std::string merge = out_.culprit["commit"];
    PARITY_ASSIGN_OR_RETURN(HistoryCommit m, git_.Describe(merge));
    if (m.parents.size() < 2) return Status::Ok();
    PARITY_ASSIGN_OR_RETURN(auto side, git_.FirstParentRange(m.parents[0], m.parents[1]));
    if (side.empty()) return Status::Ok();
    const std::string fork = side.front().parents.empty() ? "" : side.front().parents[0];
    obs_.Note("into the merge " + Short(merge) + ": " + std::to_string(side.size()) + " commit(s) of its merged branch");
    std::vector<HistoryCommit> chain;
    auto known = verdicts_.find(fork);
    if (!fork.empty() && (known == verdicts_.end() || known->second != ProbeVerdict::kSame)) {
      PARITY_ASSIGN_OR_RETURN(HistoryCommit f, git_.Describe(fork));
      chain.push_back(f);  // the fork point must be shown to match before its branch is judged
    }
    chain.insert(chain.end(), side.begin(), side.end());
    PARITY_ASSIGN_OR_RETURN(BisectAnswer a, Search("merge " + Short(merge), chain));
    json inside = {{"answer", BisectAnswerName(a.kind)}};
    if (a.kind == BisectAnswer::Kind::kFound && !(chain.front().commit == fork && a.hi == 1)) {
      out_.culprit = CommitJson(chain[a.hi - 1]);
      out_.culprit["inside_merge"] = merge;
      out_.explanation = "the merge " + Short(merge) + " brings the change; inside its merged branch the first commit "
                         "whose numbers differ is " + Short(chain[a.hi - 1].commit) + " \"" + chain[a.hi - 1].subject + "\"";
    } else if (a.kind == BisectAnswer::Kind::kNoChange) {
      out_.explanation += "; every commit of its merged branch matches the good numbers, so the merge itself (the "
                          "combination of both parents) changes them";
    } else {
      out_.explanation += "; inside the merge the search ended " + std::string(BisectAnswerName(a.kind)) +
                          (chain.front().commit == fork ? " (its fork point " + Short(fork) + " already differs or does not run)" : "");
    }
    inside["explanation"] = out_.explanation;
    into_merge_ = inside;
    obs_.Note("answer: " + out_.explanation);
    return Status::Ok();
  }

  void Hunt() {
    if (!o_.hunt) {
      out_.hunt_skipped = "no hunt config (--hunt-config): the culprit's line was not searched";
      obs_.Note(out_.hunt_skipped);
      return;
    }
    const std::string culprit = out_.culprit["commit"], parent = out_.culprit.value("parent", "");
    if (parent.empty()) {
      out_.hunt_skipped = "the culprit has no parent to compare it with";
      return;
    }
    obs_.Step(4, 4, "the hunt: " + Short(culprit) + " against its parent " + Short(parent));
    ComparerConfig hc = *o_.hunt;
    for (ComparerSide* side : {&hc.baseline, &hc.test}) {
      if (side->mode == "local") side->code_path = top_.string();
    }
    hc.baseline.ref = parent;
    hc.test.ref = culprit;
    HuntOptions ho;
    ho.report_dir = c_.report_dir / "hunt";
    ho.assume_yes = o_.assume_yes || c_.confirm.classes_proposed;
    ho.keep_worktrees = o_.keep_worktrees;
    ho.language = c_.language;
    ho.cancel = o_.cancel;
    HuntSteps steps(obs_);
    auto hunt = RunHunt(hc, ho, run_, steps);
    if (!hunt.ok()) {
      out_.hunt_skipped = "the hunt stopped: " + hunt.status().ToString();
      Warn(out_.hunt_skipped);
      return;
    }
    out_.hunt = *hunt;
  }

  Result<BisectOutcome> Finish() {
    out_.trainings = prober_->trainings();
    out_.jobs = prober_->scheduler_jobs();
    for (auto& w : warnings_) out_.warnings.push_back(w);
    json doc = BisectJson(out_);
    if (!into_merge_.is_null()) doc["into_merge"] = into_merge_;
    fs::path json_path = c_.report_dir / "bisect.json", md_path = c_.report_dir / "bisect.md";
    PARITY_RETURN_IF_ERROR(WriteFile(json_path, doc.dump(2) + "\n"));
    PARITY_RETURN_IF_ERROR(WriteFile(md_path, BisectMarkdown(out_)));
    out_.report_json = json_path.string();
    out_.report_md = md_path.string();
    ledger::Entry e;
    e.tool = "parity bisect";
    e.action = "bisect";
    e.side = "both";
    e.git = {{"repo", top_.string()}, {"commit", out_.bad_commit}, {"baseline_commit", out_.good_commit}};
    e.inputs = {{"case", out_.case_name}, {"steps", c_.steps}, {"into_merges", o_.into_merges}, {"parallel", o_.parallel}};
    json probes = json::array();  // each probe's own report directory (and ledger)
    for (const auto& p : out_.probes) probes.push_back(fs::path(p.report_dir).lexically_relative(c_.report_dir).generic_string());
    e.outputs = {{"bisect", "bisect.json"}, {"summary", "bisect.md"}, {"good", "good"}, {"probes", probes}};
    e.outcome = {{"status", "ok"}, {"verdict", out_.answer}, {"message", out_.explanation}};
    auto id = ledger::Append(c_.report_dir, e);
    if (!id.ok()) out_.warnings.push_back("the bisect's ledger entry could not be written: " + id.status().ToString());
    return out_;
  }

  void Warn(const std::string& line) {
    obs_.Note("warning: " + line);
    warnings_.push_back(line);
  }

  const PremergeConfig& c_;
  const BisectOptions& o_;
  StepRunner& run_;
  PipelineObserver& obs_;
  BisectGit git_;
  fs::path top_;
  std::optional<BisectProber> prober_;
  std::map<std::string, ProbeVerdict> verdicts_;  // every commit judged so far
  size_t seq_ = 0, round_ = 0;
  json into_merge_;
  std::vector<std::string> warnings_;
  BisectOutcome out_;
};

}  // namespace

Result<BisectOutcome> RunBisect(const PremergeConfig& config, const BisectOptions& options, StepRunner& runner,
                                PipelineObserver& observer) {
  return Bisect(config, options, runner, observer).Run();
}

int BisectExitCode(const Result<BisectOutcome>& outcome) {
  if (!outcome.ok()) return 2;
  if (outcome->answer == "no_change") return 0;
  if (outcome->answer == "found" || outcome->answer == "skipped_range") return 1;
  return 2;
}

}  // namespace parity::workflow
