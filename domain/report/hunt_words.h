// The root-cause section's sentences in the report's language, rebuilt from the evidence
// hunt.json carries (msprobe_first_diff's cause and its evidence, the hunt's located
// object, compare figures and iterations), not translated from the English text: the
// Chinese report states the same premises and the same conclusion. Where a case has no
// Chinese sentence yet (some "inconclusive" reasons), the English reason follows a Chinese
// lead that says so.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "domain/report/document.h"

namespace parity::report {

// first_divergence.cause as a sentence (English: cause.sentence as written).
std::string CauseSentence(const nlohmann::json& first_divergence, bool zh);
// The value trace's sentence (where the differing value is set).
std::string TraceSentence(const nlohmann::json& trace, bool zh);
// A noise finding's kind and explanation.
std::string NoiseKindText(const nlohmann::json& noise, bool zh);
// The hunt's verdict name and its conclusion.
std::string HuntVerdictName(const std::string& verdict, bool zh);
std::string HuntSentence(const nlohmann::json& hunt, bool zh);
// The hunt's iterations as a table (iteration, phase, targets, probes, first divergent
// probe, perturbation check); nothing when there are none.
void AddHuntIterations(const nlohmann::json& hunt, bool zh, Document& doc);
// A number in its shortest exact form ("0.00021", "1e-06"); other values as text.
std::string ShortNumber(const nlohmann::json& v);
// A cell's text: a string as is, null "-", a number in its shortest exact form, else JSON.
std::string ValueText(const nlohmann::json& v);

}  // namespace parity::report
