// The model-backed analyser: the prompt from prompts/code-analysis/, the answer checked
// against the ast skeleton's candidates before anything is injected.
#include <algorithm>
#include <cctype>
#include <map>
#include <span>

#include "domain/inject/analyser.h"
#include "support/embedded_files.h"
#include "support/json_reader.h"
#include "support/text_template.h"

namespace parity::inject::prompts {
std::span<const parity::EmbeddedFile> Files();
}

namespace parity::inject {

namespace {

using json = nlohmann::json;

constexpr size_t kAnswerExcerptBytes = 600;

Result<std::string> Render(const std::string& name, const std::map<std::string, std::string>& values) {
  return RenderEmbeddedTemplate(prompts::Files(), "prompts/code-analysis", name, values);
}

// Lines [start, end] of the source, each prefixed with its number; the target line marked ">".
std::string Numbered(const std::string& source, int start, int end, int target) {
  std::string out;
  int number = 1;
  for (size_t at = 0; at <= source.size() && number <= end; ++number) {
    size_t nl = source.find('\n', at);
    std::string line = source.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (number >= start) {
      std::string n = std::to_string(number);
      if (!out.empty()) out += "\n";
      out += std::string(n.size() < 5 ? 5 - n.size() : 0, ' ') + n + (number == target ? " > " : "   ") + line;
    }
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return out;
}

std::string WithoutSpaces(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') out += c;
  }
  return out;
}

std::string List(const std::vector<std::string>& names) { return json(names).dump(); }

std::vector<std::string> Strings(const json& array) {
  std::vector<std::string> out;
  if (!array.is_array()) return out;
  for (const auto& v : array) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

std::vector<std::string> Union(std::vector<std::string> a, const std::vector<std::string>& b) {
  for (const auto& s : b) {
    if (std::find(a.begin(), a.end(), s) == a.end()) a.push_back(s);
  }
  return a;
}

std::vector<std::string> ReturnExpressions(const json& skeleton) {
  std::vector<std::string> out;
  for (const auto& r : skeleton.value("returns", json::array())) {
    if (r.contains("expr") && r["expr"].is_string()) out.push_back(r["expr"].get<std::string>());
  }
  return out;
}

bool IsFunction(const json& skeleton) { return skeleton.value("kind", "") == "function"; }

// The model's strings mapped onto the candidates (the code's own spelling), in the model's
// order without repeats; the first name that is not a candidate is an error naming its path.
Result<std::vector<std::string>> Choose(const std::vector<std::string>& given, const std::vector<std::string>& candidates,
                                        const std::string& path, const std::string& what, bool strip_return = false) {
  std::vector<std::string> chosen;
  for (size_t i = 0; i < given.size(); ++i) {
    std::string g = given[i];
    size_t f = g.find_first_not_of(" \t\r\n");
    if (strip_return && f != std::string::npos && g.compare(f, 6, "return") == 0 && g.size() > f + 6 &&
        (std::isspace(static_cast<unsigned char>(g[f + 6])) || g[f + 6] == '(')) {
      g = g.substr(f + 6);  // "return h" for the expression h
    }
    std::string key = WithoutSpaces(g);
    auto hit = std::find_if(candidates.begin(), candidates.end(), [&](const std::string& c) { return WithoutSpaces(c) == key; });
    if (hit == candidates.end()) {
      return InvalidArgument(path + "[" + std::to_string(i) + "]: \"" + given[i] + "\" is not " + what +
                             " (candidates: " + List(candidates) + ")");
    }
    if (std::find(chosen.begin(), chosen.end(), *hit) == chosen.end()) chosen.push_back(*hit);
  }
  return chosen;
}

// A whole answer wrapped in a Markdown fence (some chat models add one despite the prompt).
std::string Unfenced(const std::string& text) {
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text.compare(first, 3, "```") != 0) return text;
  size_t body = text.find('\n', first);
  size_t last = text.rfind("```");
  if (body == std::string::npos || last <= body) return text;
  return text.substr(body + 1, last - body - 1);
}

class LlmAnalyser : public CodeAnalyser {
 public:
  LlmAnalyser(std::string name, Completer complete) : name_(std::move(name)), complete_(std::move(complete)) {}
  const std::string& name() const override { return name_; }
  bool usable() const override { return usable_; }

  Result<json> Analyse(const Question& q, const CancellationToken& cancel) override {
    PARITY_ASSIGN_OR_RETURN(LlmPrompt prompt, BuildPrompt(q));
    auto reply = complete_(prompt, cancel);
    if (!reply.ok()) {
      Status s = std::move(reply).take_status();
      if (s.kind() != ErrorKind::kCancelled && s.kind() != ErrorKind::kInputRequired) usable_ = false;
      return s;
    }
    auto applied = ApplyAnswer(q, reply->text);
    if (!applied.ok()) {
      std::string excerpt = reply->text.size() > kAnswerExcerptBytes ? reply->text.substr(0, kAnswerExcerptBytes) + "..." : reply->text;
      Status s = std::move(applied).take_status().Context("the model's answer was rejected");
      s.WithEvidence("answer_excerpt", excerpt);
      for (const auto& [k, v] : reply->evidence.items()) s.WithEvidence(k, v.is_string() ? v.get<std::string>() : v.dump());
      return s;
    }
    json decided = reply->evidence;
    decided["answer"] = json::parse(Unfenced(reply->text), nullptr, false);
    (*applied)["model_answer"] = decided;
    return applied;
  }

 private:
  std::string name_;
  Completer complete_;
  bool usable_ = true;
};

}  // namespace

Result<LlmPrompt> BuildPrompt(const Question& q) {
  const json& k = q.skeleton;
  if (!k.is_object() || !k.contains("context")) return Internal("the ast skeleton of " + q.target + " has no context span");
  int start = k["context"].value("start", 1), end = k["context"].value("end", 1);
  const int line = k.value("line", 0);
  std::map<std::string, std::string> values = {{"file", q.file}, {"source", Numbered(q.source, start, end, line)},
                                               {"line", std::to_string(line)}};
  LlmPrompt prompt;
  PARITY_ASSIGN_OR_RETURN(prompt.system, Render("system.md", {}));
  if (IsFunction(k)) {
    values["function"] = k.value("function", "");
    values["params"] = List(Strings(k["params"]));
    values["returns"] = List(ReturnExpressions(k));
    PARITY_ASSIGN_OR_RETURN(prompt.user, Render("function_io.md", values));
  } else {
    const json& c = k.value("candidates", json::object());
    std::vector<std::string> reads = Strings(c.value("reads", json::array()));
    values["statement"] = k.value("statement", "");
    values["code"] = k.value("code", "");
    values["reads"] = List(reads);
    values["outputs"] = List(Union(Strings(c.value("writes", json::array())), reads));
    PARITY_ASSIGN_OR_RETURN(prompt.user, Render("statement_io.md", values));
  }
  return prompt;
}

Result<json> ApplyAnswer(const Question& q, const std::string& text) {
  json answer = json::parse(Unfenced(text), nullptr, false);
  if (answer.is_discarded()) return InvalidArgument("answer: not JSON");
  PARITY_RETURN_IF_ERROR(ExpectObject(answer, "answer"));
  json out = q.skeleton;
  JsonReader r(answer, "answer");
  if (IsFunction(out)) {
    std::vector<std::string> params, returns;
    r.Required("params", params).Required("returns", returns);
    PARITY_RETURN_IF_ERROR(r.Finish());
    const std::string fn = "a parameter of " + out.value("function", std::string("the function"));
    PARITY_ASSIGN_OR_RETURN(out["params"], Choose(params, Strings(out["params"]), "answer.params", fn));
    // Every return is probed whatever the model lists; its list is checked, not obeyed.
    PARITY_RETURN_IF_ERROR(Choose(returns, ReturnExpressions(out), "answer.returns", "an expression the function returns",
                                  /*strip_return=*/true)
                               .status());
    return out;
  }
  std::vector<std::string> inputs, outputs;
  r.Required("inputs", inputs).Required("outputs", outputs);
  PARITY_RETURN_IF_ERROR(r.Finish());
  const json& c = out.value("candidates", json::object());
  std::vector<std::string> reads = Strings(c.value("reads", json::array()));
  const std::string line = "line " + std::to_string(out.value("line", 0));
  PARITY_ASSIGN_OR_RETURN(out["inputs"], Choose(inputs, reads, "answer.inputs", "a value " + line + " reads"));
  PARITY_ASSIGN_OR_RETURN(out["outputs"], Choose(outputs, Union(Strings(c.value("writes", json::array())), reads),
                                                 "answer.outputs", "a value " + line + " writes or reads"));
  return out;
}

std::shared_ptr<CodeAnalyser> MakeLlmAnalyser(std::string name, Completer complete) {
  return std::make_shared<LlmAnalyser>(std::move(name), std::move(complete));
}

std::shared_ptr<CodeAnalyser> MakeDeepSeekAnalyser(ChatEndpoint endpoint) {
  return MakeLlmAnalyser("deepseek", [endpoint](const LlmPrompt& p, const CancellationToken& cancel) -> Result<LlmReply> {
    PARITY_ASSIGN_OR_RETURN(ChatReply reply, ChatComplete(endpoint, {{"system", p.system}, {"user", p.user}}, p.max_tokens, cancel));
    LlmReply out;
    out.text = std::move(reply.content);
    out.evidence = {{"endpoint", RedactUrl(endpoint.base_url)}, {"model", reply.model}, {"attempts", reply.attempts}};
    return out;
  });
}

}  // namespace parity::inject
