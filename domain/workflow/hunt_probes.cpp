// Hunt's probes: the first divergent operator (msprobe_first_diff), the probes at its line
// and then in every function of its stack, the reruns, their checks and the revert.
#include <algorithm>
#include <ctime>
#include <set>

#include "domain/workflow/hunt_loop.h"
#include "domain/workflow/hunt_remote.h"
#include "support/safe_file.h"

namespace parity::workflow::hunt_internal {

namespace {

bool IsTensorRecord(const json& probe) {
  const json& b = probe.value("baseline", json::object());
  return b.is_object() && b.value("type", "").find("Tensor") != std::string::npos;
}

}  // namespace


Status Hunt::FirstDiff(const std::string& log_verdict) {
  json args = {{"baseline_dump", base_.dump_dir.string()}, {"candidate_dump", cand_.dump_dir.string()},
               {"criterion", c_.tolerance == 0 ? "bitwise" : "msprobe"}, {"worktree", cand_.worktree.string()},
               {"repo", cand_.worktree.string()}, {"baseline_ref", repo_.baseline_commit},
               {"candidate_ref", repo_.candidate_commit}};
  if (!c_.parse_code_dir.empty()) args["user_code"] = {c_.parse_code_dir};
  if (!c_.compare_output_dir.empty()) args["compare_table"] = true;  // the table only where the user asked for it
  PARITY_ASSIGN_OR_RETURN(first_diff_, Call("msprobe_first_diff", args));
  const json& src = first_diff_["source"];
  dump_step_ = src.contains("candidate") ? src["candidate"].value("step", 0) : 0;
  dump_rank_ = src.contains("candidate") ? src["candidate"].value("rank", 0) : 0;
  PARITY_RETURN_IF_ERROR(CopyCompareTable());
  if (!first_diff_.value("found", false)) {
    std::string where = "the msprobe dumps (step " + std::to_string(dump_step_) + ", rank " + std::to_string(dump_rank_) + ")";
    if (log_verdict == "FAIL") {
      Conclude(kHuntInconclusive, "loss/grad norm differ, but " + where + " show no divergent API: dump the step "
               "where the logs first differ (msprobe's step setting) and run the hunt again");
    } else {
      Conclude(kHuntNoDivergence, "the logs' printed digits cannot decide (" + log_verdict + "), and " + where +
               " show no divergent API: " + first_diff_.value("explanation", ""));
    }
    return Status::Ok();
  }
  PARITY_RETURN_IF_ERROR(KeepDumps());
  const json& fd = first_diff_["first_divergence"];
  obs_.Note("first divergent API " + fd.value("api", "?") + " (" + fd.value("verdict", "?") + "): " +
            first_diff_.value("explanation", ""));
  const json& source = fd.value("source", json());
  if (!source.is_object() || !source["local_file"].is_string()) {
    located_ = {{"api", fd.value("api", "")}};
    Conclude(kHuntInconclusive, "msprobe names " + fd.value("api", "?") + " but no line of user code in the " +
             "worktree: " + fd.value("stack_note", json("the stack has no user frame")).dump());
    return Status::Ok();
  }
  std::string file = Rel(source["local_file"].get<std::string>(), cand_.worktree);
  int line = source.value("line", 0);
  located_ = {{"api", fd.value("api", "")}, {"file", file}, {"line", line}, {"function", source.value("function", "")},
              {"code", source.value("line_text", "")}, {"in_changed_hunk", source.value("in_changed_hunk", false)},
              {"hunk", source.value("hunk", json())}};
  // msprobe's cause, and where the value that differs was set when the line did not change.
  const json& cause = fd.value("cause", json());
  if (cause.is_object()) {
    located_["cause"] = {{"kind", cause.value("kind", "")}, {"sentence", cause.value("sentence", "")}};
    const json& trace = cause.value("trace", json());
    if (trace.is_object()) {
      located_["trace"] = trace;
      if (!trace.value("hunks", json::array()).empty()) {
        json hunk = trace["hunks"][0];
        hunk.erase("reasons");
        located_["hunk"] = hunk;
        located_["hunk_found_by"] = "value trace";
      }
    }
  }
  obs_.Note("user frame " + file + ":" + std::to_string(line) + ": " + source.value("line_text", ""));
  return Status::Ok();
}

Status Hunt::CopyCompareTable() {
  if (c_.compare_output_dir.empty() || !first_diff_.value("compare_table", json()).is_string()) return Status::Ok();
  const fs::path from = first_diff_["compare_table"].get<std::string>();
  const fs::path dir = c_.compare_output_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return Unavailable(c_.name + ".msprobe.compare_output_dir: cannot create " + dir.string() + ": " + ec.message());
  }
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &tm);
  const fs::path to = dir / ("compare_result_rank" + std::to_string(dump_rank_) + "_" + stamp + ".csv");
  Status copied = CopyFileUnder(from, dir, to.filename(), WriteOptions{}, /*replace=*/false);
  if (!copied.ok()) {
    return Status(copied.kind(), c_.name + ".msprobe.compare_output_dir: cannot copy " + from.string() + " to " +
                                     to.string() + ": " + copied.message())
        .WithHint("an existing file is never overwritten; run again in a second, or choose another folder");
  }
  hunt_["compare_output"] = to.string();
  obs_.Note("compare table copied to " + to.string());
  return Status::Ok();
}

Status Hunt::KeepDumps() {
  for (const char* side : {"baseline", "candidate"}) {
    const json& src = first_diff_["source"].value(side, json::object());
    for (const char* key : {"dump_json", "stack_json", "construct_json"}) {
      if (!src.contains(key) || !src[key].is_string()) continue;
      fs::path from = src[key].get<std::string>();
      fs::path to = o_.report_dir / "hunt" / "dumps" / side / from.filename();
      PARITY_RETURN_IF_ERROR(CopyFileUnder(from, o_.report_dir, to.lexically_relative(o_.report_dir))
                                 .Context("keeping " + from.string()));
      hunt_["dumps"][side][key] = Rel(to, o_.report_dir);
    }
  }
  return Status::Ok();
}

Status Hunt::Iterate() {
  json carried = json::array();  // iteration 1's notes when it had no statement to probe
  for (int it = 1; it <= std::min(c_.max_iterations, 2); ++it) {
    json targets_c = json::array(), targets_b = json::array(), notes = carried;
    if (it == 1) {
      PARITY_RETURN_IF_ERROR(AddTarget(located_["file"], located_["line"], false, targets_b, targets_c, notes));
      if (targets_b.empty() && targets_c.empty() && out_.verdict.empty()) {
        // The change added the statement (AddTarget gave no target, and a note): the
        // baseline has no statement to compare it with, but both sides have the function
        // around it, so its entry and its return are compared instead (iteration 2's probes
        // of the stack's functions).
        obs_.Note(notes.back().get<std::string>());
        carried = notes;
        continue;
      }
    } else {
      std::set<std::pair<std::string, int>> seen;  // a recursive stack names a frame twice
      for (const json& f : first_diff_["first_divergence"].value("stack", json::array())) {
        if (!f.value("user", false) || f.value("function", "") == "<module>") continue;
        if (!seen.insert({f.value("file", ""), f.value("line", 0)}).second) continue;
        fs::path local = LocalFrameFile(f["file"].get<std::string>());
        std::string rel = Rel(local, cand_.worktree);
        if (local.is_relative() || rel.rfind("..", 0) == 0 || !fs::exists(cand_.worktree / rel)) {
          notes.push_back("frame " + f["file"].get<std::string>() + " is not in the worktree: not instrumented");
          continue;
        }
        PARITY_RETURN_IF_ERROR(AddTarget(rel, f["line"], true, targets_b, targets_c, notes));
      }
    }
    if (!out_.verdict.empty()) return Status::Ok();  // AddTarget concluded
    if (targets_c.empty() || targets_b.empty()) {
      Conclude(kHuntInconclusive, "nothing left to instrument in iteration " + std::to_string(it));
      return Status::Ok();
    }
    PARITY_ASSIGN_OR_RETURN(bool done, Instrumented(it, targets_b, targets_c, notes));
    if (done) return Status::Ok();
  }
  Conclude(kHuntInconclusive, "max_iterations (" + std::to_string(c_.max_iterations) + ") reached: the inputs of " +
           located_.value("file", "") + ":" + std::to_string(located_.value("line", 0)) + " already differ");
  return Status::Ok();
}

fs::path Hunt::LocalFrameFile(const std::string& recorded) const {
  if (!cand_.remote()) return recorded;
  return MapIntoWorktree(recorded, cand_.remote_worktree, cand_.worktree);
}

Status Hunt::AddTarget(const std::string& file, int line, bool enclosing, json& targets_b, json& targets_c, json& notes) {
  json t = {{"file", file}, {"line", line}};
  if (enclosing) t["enclosing_function"] = true;
  if (!fs::exists(base_.worktree / file)) {
    notes.push_back(file + " does not exist in the baseline: probed on the test side only");
    targets_c.push_back(t);
    return Status::Ok();
  }
  auto hunks = msprobe::DiffHunks(cand_.worktree, repo_.baseline_commit, repo_.candidate_commit, file);
  if (!hunks.ok()) return std::move(hunks).take_status().Context("mapping " + file + " to the baseline");
  std::optional<int> base_line = BaselineLineOf(*hunks, line);
  if (!base_line) {
    if (!enclosing) {
      const std::string added = file + ":" + std::to_string(line) + " was added by the change, so the baseline has "
                                "no statement to compare it with; msprobe names " + located_.value("api", "?") + " there";
      if (c_.max_iterations < 2) {
        Conclude(kHuntInconclusive, added + ", and debug.max_iterations (" + std::to_string(c_.max_iterations) +
                 ") leaves no iteration to compare the functions around it");
        return Status::Ok();
      }
      notes.push_back(added + ": the functions on its stack are compared at their entry and return instead");
      return Status::Ok();
    }
    notes.push_back(file + ":" + std::to_string(line) + " was added by the change; the baseline's enclosing "
                    "function is looked up from the nearest line above");
    base_line = std::max(1, line - 1);
    for (int l = line - 1; l >= 1 && !(base_line = BaselineLineOf(*hunks, l)); --l) {}
    if (!base_line) base_line = 1;
  }
  json tb = t;
  tb["line"] = *base_line;
  targets_b.push_back(tb);
  targets_c.push_back(t);
  return Status::Ok();
}

Result<bool> Hunt::Instrumented(int it, const json& targets_b, const json& targets_c, json notes) {
  const std::string label = "hunt_probe" + std::to_string(it);
  json record = {{"iteration", it}, {"phase", it == 1 ? "statement" : "stack functions"},
                 {"targets", {{"baseline", targets_b}, {"candidate", targets_c}}}};
  // The probes print on the dumped rank, for the first call when the dump is of step 0.
  json calls = dump_step_ == 0 ? json::array({1}) : json::array();
  for (Side* s : {&base_, &cand_}) {
    json args = {{"action", "inject"}, {"worktree", s->worktree.string()},
                 {"targets", s == &base_ ? targets_b : targets_c}, {"rank", dump_rank_}, {"calls", calls}};
    injected_.push_back(s);
    PARITY_ASSIGN_OR_RETURN(json inj, Call("inject_prints", args));
    record["injected"][s->name] = {{"files", inj.value("files", json::array())},
                                   {"probes", inj.value("probes", json::array()).size()},
                                   {"analyser", inj.value("analyser", json())}};
    if (s->remote()) {  // injected (and analysed) locally; the same bytes go where it runs
      s->helper = inj.value("helper", "_parity_probe.py");
      for (const json& f : inj.value("files", json::array())) s->remote_probed.push_back(f.value("path", ""));
      Status up = UploadInjected(*s->host, s->worktree, s->remote_worktree, s->remote_probed, s->helper, o_.cancel);
      if (!up.ok()) return std::move(up).Context(SideWhere(c_, *s->config, s->key));
      record["injected"][s->name]["uploaded_to"] = s->Where();
    }
    obs_.Note(label + ": " + std::to_string(inj.value("probes", json::array()).size()) + " probe(s) in " + s->name);
  }
  std::map<std::string, RunFiles> runs;
  for (Side* s : {&base_, &cand_}) {
    std::vector<std::string> argv = s->argv;
    std::optional<int> steps;
    if (auto flag = StepsFlagOf(*s)) {
      steps = std::min(flag->value, dump_step_ + 1);
      argv = WithSteps(argv, *flag, *steps);
    } else if (it == 1 && s == &base_) {
      Warn("the run_script has no step flag parity knows (--training.steps, --train-iters): reruns take as long "
           "as the first runs");
    }
    PARITY_ASSIGN_OR_RETURN(runs[s->name], RunSide(*s, label, argv, steps));
  }
  record["steps"] = dump_step_ + 1;
  const size_t reverted_before = reverted_.size();
  PARITY_RETURN_IF_ERROR(RevertAll());
  record["reverted"] = json::array();
  for (size_t i = reverted_before; i < reverted_.size(); ++i) record["reverted"].push_back(reverted_[i]);

  // Trust the instrumented runs only if they reproduce the uninstrumented ones.
  for (Side* s : {&base_, &cand_}) {
    PARITY_ASSIGN_OR_RETURN(json check, CompareLogs(s->run0.metrics(), runs[s->name].metrics(),
                                                    label + "_" + s->name + "_check", true));
    std::string v = check.value("verdict", "INCONCLUSIVE");
    record["perturbation"][s->name] = {{"verdict", v}, {"reason", check.value("verdict_reason", "")}};
    if (v == "FAIL") {
      iterations_.push_back(record);
      Conclude(kHuntInconclusive, "the probes perturbed the numerics: the instrumented " + s->name + " run's loss/grad "
               "norm differ from its uninstrumented run (" + check.value("verdict_reason", "") + "), so its probes "
               "cannot be trusted");
      return true;
    }
    if (v != "PASS" && !digits_warned_) {
      digits_warned_ = true;
      Warn(PrintedDigitsWarning(check));
    }
  }
  PARITY_ASSIGN_OR_RETURN(json compared, CompareLogs(runs["baseline"].log, runs["candidate"].log, label, false));
  const json& probes = compared.value("probes", json());
  if (!probes.is_object()) {
    return Internal("compare_logs returned no probe comparison for " + label)
        .WithEvidence("logs", runs["baseline"].log + "\n" + runs["candidate"].log);
  }
  record["probes"] = {{"baseline_count", probes.value("baseline_count", json())},
                      {"candidate_count", probes.value("candidate_count", json())},
                      {"matched", probes.value("matched", json())},
                      {"divergent_count", probes.value("divergent_count", json())},
                      {"first_divergent", probes.value("first_divergent", json())},
                      {"trace_threshold", c_.trace_threshold},
                      {"beyond_threshold_count", probes.value("beyond_tolerance_count", json())},
                      {"first_beyond_threshold", probes.value("first_beyond_tolerance", json())},
                      {"unmatched_baseline", probes.value("unmatched_baseline", json::array())},
                      {"unmatched_candidate", probes.value("unmatched_candidate", json::array())},
                      {"report", compared.value("report", "")}};
  if (!notes.empty()) record["notes"] = notes;
  // Across the stack's functions, the first divergent tensor: an outer function's differing
  // non-tensor argument (main's argv, which names each side's own dump folder) says
  // little. At the statement every input counts.
  json first = CountedDivergence(probes, label);
  // A non-tensor value is evidence like a tensor, except one that differs only because each
  // side names its own dump folder (main's argv).
  auto names_own_folder = [&](const json& p) {
    const std::string b = ProbeValue(p.value("baseline", json())), c = ProbeValue(p.value("candidate", json()));
    return !IsTensorRecord(p) && !c_.baseline_data_dir.empty() && b.find(c_.baseline_data_dir) != std::string::npos &&
           c.find(c_.test_data_dir) != std::string::npos;
  };
  if (it > 1 && first.is_object() && names_own_folder(first)) {
    for (const json& p : probes.value("next_divergent", json::array())) {
      if (!names_own_folder(p) && !p.value("within_tolerance", false)) {
        record["non_tensor_divergence_skipped"] = first;
        obs_.Note(label + ": " + first.value("name", "?") + " differs only by each side's own dump folder; the next "
                  "divergent probe is followed");
        first = p;
        break;
      }
    }
    // Nothing but the dump folders differs: no probe shows a divergence.
    if (names_own_folder(first)) first = json();
  }
  if (!first.is_object() && it == 1 && probes.value("matched", json(0)) == json(0) &&
      located_.value("in_changed_hunk", false) && c_.max_iterations >= 2) {
    // The change rewrote the statement: no probe of one side has a counterpart on the
    // other (other names), so the functions around it are compared at entry and return.
    record["notes"].push_back("no probe at " + located_.value("file", "") + ":" +
                              std::to_string(located_.value("line", 0)) + " has a counterpart on the other side "
                              "(the change rewrote the statement): the functions on its stack are compared at "
                              "their entry and return instead");
    iterations_.push_back(record);
    obs_.Note(label + ": " + record["notes"].back().get<std::string>());
    return false;
  }
  iterations_.push_back(record);
  if (!first.is_object()) {
    Conclude(kHuntInconclusive, "the probes of iteration " + std::to_string(it) + " are equal on both sides (" +
             probes.value("matched", json(0)).dump() + " matched): the difference is not visible at the instrumented "
             "call; dump another step or rank (where the logs first differ)" +
             (MsprobeCauseWords().empty() ? "" : "; " + MsprobeCauseWords()));
    return true;
  }
  std::string when = first.value("when", "");
  // Sites are the test side's lines (the user's change); the pairing key holds no line.
  const json& cand_record = first.value("candidate", json::object());
  std::string site = cand_record.is_object() ? cand_record.value("site", first.value("site", "")) : first.value("site", "");
  std::string where = site + " " + when + " " + first.value("name", "?");
  obs_.Note(label + ": first divergent probe " + where);
  json probe = {{"site", site}, {"baseline_site", first.value("site", "")}, {"when", when}, {"name", first.value("name", "")},
                {"call", first.value("call", json())}, {"rank", first.value("rank", json())},
                {"baseline", first.value("baseline", json())}, {"candidate", first.value("candidate", json())}};
  const bool within_before = first.value("key", "") != probes.value("first_divergent", json::object()).value("key", "");
  if (it == 1 && (when == "after" || when == "return")) {
    located_["probe"] = probe;
    ConcludeAtStatement(first, true, within_before);
    return true;
  }
  if (it == 1 && !IsTensorRecord(first)) {
    // A non-tensor value differs before the statement: the call's tensors may all be equal.
    bool tensor_differs = false;
    for (const json& p : probes.value("next_divergent", json::array())) {
      tensor_differs |= IsTensorRecord(p) && p.value("when", "") == "before" && !p.value("within_tolerance", false);
    }
    if (!tensor_differs) {
      located_["probe"] = probe;
      ConcludeAtStatement(first, false, within_before);
      return true;
    }
  }
  if (it == 1) {
    obs_.Note(label + ": the inputs already differ (" + first.value("name", "") + "): instrumenting every function on "
              "the stack");
    return false;
  }
  located_["probe"] = probe;
  located_["site"] = site;
  located_["when"] = when;
  ConcludeInStack(first, site, when);
  return true;
}

json Hunt::CountedDivergence(const json& probes, const std::string& label) {
  json first = probes.value("first_divergent", json());
  if (c_.trace_threshold <= 0 || !first.is_object() || !probes.contains("first_beyond_tolerance")) return first;
  const json& beyond = probes["first_beyond_tolerance"];
  const std::string threshold = json(c_.trace_threshold).dump();
  if (!beyond.is_object()) {
    Warn(label + ": every probe difference is within debug.trace_threshold (" + threshold + "); the first bitwise "
         "difference is followed: " + first.value("key", "?"));
    return first;
  }
  if (beyond.value("key", "") != first.value("key", "")) {
    const int64_t within = probes.value("divergent_count", int64_t{0}) - probes.value("beyond_tolerance_count", int64_t{0});
    obs_.Note(label + ": " + std::to_string(within) + " probe(s) differ only within debug.trace_threshold (" +
              threshold + "), first " + first.value("key", "?") + "; followed: " + beyond.value("key", "?"));
  }
  return beyond;
}

Status Hunt::RevertAll() {
  Status first_error = Status::Ok();
  while (!injected_.empty()) {
    Side* s = injected_.back();
    injected_.pop_back();
    json args = {{"action", "revert"}, {"worktree", s->worktree.string()}, {"report_dir", o_.report_dir.string()}};
    auto r = run_.Call("inject_prints", args);  // also after a cancel: the probes must go
    auto st = r.ok() ? run_.Call("inject_prints", {{"action", "status"}, {"worktree", s->worktree.string()},
                                                   {"report_dir", o_.report_dir.string()}})
                     : Result<json>(std::move(r).take_status());
    if (!st.ok() || st->value("injected", true)) {
      Status e = st.ok() ? Internal("probes are still injected in " + s->worktree.string() + " after revert")
                         : std::move(st).take_status().Context("reverting the probes in " + s->worktree.string());
      if (!s->remote_probed.empty()) e.WithEvidence("remote files that may still hold probes", RemoteProbedList(*s));
      if (first_error.ok()) first_error = e;
      continue;
    }
    json entry = {{"worktree", s->worktree.string()}, {"files", r->value("files", json::array())},
                  {"verified", r->value("verified", "")}};
    if (s->remote() && !s->remote_probed.empty()) {
      auto restored = RestoreRemoteSide(*s);
      if (!restored.ok()) {
        if (first_error.ok()) first_error = std::move(restored).take_status();
        continue;
      }
      entry["remote"] = *restored;
      s->remote_probed.clear();
    }
    reverted_.push_back(entry);
  }
  return first_error;
}

Result<json> Hunt::RestoreRemoteSide(Side& s) {
  const CancellationToken never;  // also after a cancel: the probes must go
  auto restored = RestoreRemote(*s.host, s.worktree, s.remote_worktree, s.remote_probed, s.helper, never);
  if (!restored.ok() && s.host->Reconnect().ok()) {
    restored = RestoreRemote(*s.host, s.worktree, s.remote_worktree, s.remote_probed, s.helper, never);
  }
  if (restored.ok()) return restored;
  return std::move(restored).take_status().Context(SideWhere(c_, *s.config, s.key) + ": restoring the probed files")
      .WithEvidence("remote files that may still hold probes", RemoteProbedList(s));
}

std::string Hunt::RemoteProbedList(const Side& s) {
  std::string list;
  for (const auto& f : s.remote_probed) list += (list.empty() ? "" : ", ") + s.remote_worktree + "/" + f;
  return list + (list.empty() ? "" : ", ") + s.remote_worktree + "/" + s.helper + " (" + s.host->Describe() + ")";
}

}  // namespace parity::workflow::hunt_internal
