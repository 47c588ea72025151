// Who decides what a probe target reads and writes. Python's ast (ast_analyzer.py, run by the
// training host's interpreter) always gives the structure: the statement's span and
// indentation, the function's parameters and return statements, and the expressions that
// exist there (the candidates). An analyser then decides which of them are the target's
// inputs and outputs (or which parameters to probe) and returns the analysis in that same
// shape, so injection never cares who decided.
//
// Three implementations: MakeAstAnalyser() (the ast's own choice), and MakeLlmAnalyser()
// over a completion function, used for DeepSeek / any OpenAI-compatible endpoint
// (MakeDeepSeekAnalyser) and for MCP sampling (the tool passes a function over
// ToolContext::Sample; domain code knows nothing of MCP).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/inject/openai_client.h"
#include "support/cancel.h"
#include "support/status.h"

namespace parity::inject {

struct Question {
  std::string file;        // relative to the worktree, '/'-separated
  std::string source;      // the file's text
  std::string target;      // how the target is named in messages: "pkg/model.py:18"
  nlohmann::json skeleton; // ast_analyzer.py's answer for the target
};

class CodeAnalyser {
 public:
  virtual ~CodeAnalyser() = default;
  virtual const std::string& name() const = 0;
  // False once the analyser failed in a way that will not change for the next target
  // (endpoint unreachable, key refused): a chain then skips it instead of waiting again.
  virtual bool usable() const { return true; }
  virtual Result<nlohmann::json> Analyse(const Question& question, const CancellationToken& cancel) = 0;
};

// "python-ast": the skeleton's own inputs/outputs/params.
std::shared_ptr<CodeAnalyser> MakeAstAnalyser();

struct Decision {
  std::string analyser;     // who decided
  nlohmann::json analysis;  // in the skeleton's shape
};

// Tries the chain in order for one target and appends every try to `attempts` ({analyser,
// target, ok, kind, message, hint, evidence} or {..., skipped}). Without fall_back the
// first failure is the error; with it the next analyser is tried, and the error comes only
// when all failed. nullopt: an analyser asked the client and waits for its answer
// (kInputRequired). Cancellation is returned at once.
Result<std::optional<Decision>> Decide(const std::vector<std::shared_ptr<CodeAnalyser>>& chain, bool fall_back,
                                       const Question& question, const CancellationToken& cancel,
                                       nlohmann::json& attempts);

struct LlmPrompt {
  std::string system;
  std::string user;
  int max_tokens = 1024;
};

struct LlmReply {
  std::string text;
  nlohmann::json evidence = nlohmann::json::object();  // model, endpoint, attempts: kept in the analysis
};

using Completer = std::function<Result<LlmReply>(const LlmPrompt&, const CancellationToken&)>;

// An analyser that asks a model (prompts/code-analysis/*.md) and validates its answer: JSON,
// the schema (errors name the JSON path, "answer.inputs[1]"), and every name one of the
// skeleton's candidates. A completion failure makes it unusable for later targets; an
// invalid answer fails only that target. Errors of kind kInputRequired (an MCP client that
// answers sampling in a later round) and kCancelled pass through untouched.
std::shared_ptr<CodeAnalyser> MakeLlmAnalyser(std::string name, Completer complete);

// MakeLlmAnalyser("deepseek", ...) over ChatComplete.
std::shared_ptr<CodeAnalyser> MakeDeepSeekAnalyser(ChatEndpoint endpoint);

// Exposed for tests and for callers that show the prompt.
Result<LlmPrompt> BuildPrompt(const Question& question);
// The skeleton with the model's validated choice in place of the ast's.
Result<nlohmann::json> ApplyAnswer(const Question& question, const std::string& answer);

}  // namespace parity::inject
