#include "domain/inject/analyser.h"

namespace parity::inject {

namespace {

using json = nlohmann::json;

class AstAnalyser : public CodeAnalyser {
 public:
  const std::string& name() const override { return name_; }
  Result<json> Analyse(const Question& q, const CancellationToken&) override { return q.skeleton; }

 private:
  std::string name_ = "python-ast";
};

json AttemptRecord(const std::string& analyser, const std::string& target, const Status& s) {
  json record = {{"analyser", analyser}, {"target", target}, {"ok", s.ok()}};
  if (s.ok()) return record;
  record["kind"] = ErrorKindName(s.kind());
  record["message"] = s.message();
  if (!s.hint().empty()) record["hint"] = s.hint();
  json evidence = json::object();
  for (const auto& e : s.evidence()) evidence[e.name] = e.value;
  if (!evidence.empty()) record["evidence"] = evidence;
  return record;
}

}  // namespace

Result<std::optional<Decision>> Decide(const std::vector<std::shared_ptr<CodeAnalyser>>& chain, bool fall_back,
                                       const Question& question, const CancellationToken& cancel, json& attempts) {
  Status last = Unavailable("no analyser could be tried: each failed on an earlier target");
  for (const auto& analyser : chain) {
    if (!analyser->usable()) {
      attempts.push_back({{"analyser", analyser->name()}, {"target", question.target}, {"ok", false},
                          {"skipped", "it failed on an earlier target"}});
      continue;
    }
    auto result = analyser->Analyse(question, cancel);
    if (result.ok()) {
      attempts.push_back(AttemptRecord(analyser->name(), question.target, Status::Ok()));
      return std::optional<Decision>(Decision{analyser->name(), std::move(*result)});
    }
    Status s = std::move(result).take_status();
    if (s.kind() == ErrorKind::kCancelled) return s;
    if (s.kind() == ErrorKind::kInputRequired) return std::optional<Decision>();
    attempts.push_back(AttemptRecord(analyser->name(), question.target, s));
    if (!fall_back) return std::move(s).Context(analyser->name() + " analysis of " + question.target);
    last = std::move(s).Context(analyser->name() + " analysis of " + question.target);
  }
  return std::move(last).Context("every analyser failed (see attempts)").WithEvidence("attempts", attempts.dump());
}

std::shared_ptr<CodeAnalyser> MakeAstAnalyser() { return std::make_shared<AstAnalyser>(); }

}  // namespace parity::inject
