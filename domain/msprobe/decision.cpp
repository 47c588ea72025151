#include "domain/msprobe/decision.h"

namespace parity::msprobe {

using json = nlohmann::json;

const char* CauseName(Cause cause) {
  switch (cause) {
    case Cause::kUnmatched: return "unmatched";
    case Cause::kArgument: return "argument";
    case Cause::kOperator: return "operator";
    case Cause::kOperands: return "operands";
    case Cause::kUpstream: return "upstream";
  }
  return "?";
}

const char* NoiseKindName(NoiseKind kind) {
  switch (kind) {
    case NoiseKind::kCrcAfterInplace: return "crc_after_inplace";
    case NoiseKind::kCrcUnconfirmed: return "crc_unconfirmed";
    case NoiseKind::kMaskedInput: return "masked_input";
  }
  return "?";
}

namespace {

std::string Names(const std::vector<RowText>& rows, size_t limit = 3) {
  std::string out;
  for (size_t i = 0; i < rows.size() && i < limit; ++i) {
    out += (i ? ", " : "") + rows[i].name;
    if (!rows[i].detail.empty()) out += " (" + rows[i].detail + ")";
  }
  if (rows.size() > limit) out += " and " + std::to_string(rows.size() - limit) + " more";
  return out;
}

std::string Arguments(const std::vector<RowText>& rows) {
  std::string out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const RowText& r = rows[i];
    out += (i ? "; " : "") + r.name;
    if (r.candidate || r.baseline) {
      out += " is " + r.candidate.value_or("absent") + " in the candidate, " + r.baseline.value_or("absent") +
             " in the baseline";
    } else {
      out += " differs";
      if (!r.detail.empty()) out += " (" + r.detail + ")";
    }
  }
  return out;
}

}  // namespace

Decision Decide(const Evidence& e, std::string_view api_view, const std::vector<RowText>& inputs,
                const std::vector<RowText>& arguments, const std::vector<RowText>& outputs,
                std::string_view earlier_api) {
  const std::string api(api_view);
  const std::string as_told = e.statistics_only ? " (as far as the dumped statistics tell)" : "";
  Decision d;
  if (!e.any_matched) {
    d.cause = Cause::kUnmatched;
    d.rule = "no row of the API has a baseline counterpart";
    d.sentence = api + " has no counterpart in the baseline dump: the candidate calls an API the baseline does not "
                       "call at this point (the sequence of calls changed)";
  } else if (e.differing_inputs.empty() && !e.differing_arguments.empty()) {
    d.cause = Cause::kArgument;
    d.rule = "tensor inputs equal, a non-tensor argument differs";
    d.sentence = api + "'s tensor inputs are equal on both sides" + as_told + ", but its argument " +
                 Arguments(arguments) + ": that value is the cause of the divergence, so what matters is where it "
                 "is set";
  } else if (e.differing_inputs.empty()) {
    d.cause = Cause::kOperator;
    d.rule = "tensor inputs and non-tensor arguments equal, an output differs";
    d.sentence = api + "'s inputs and arguments are equal on both sides" + as_told + ", and its output " +
                 (outputs.empty() ? std::string("(unmatched)") : Names(outputs)) +
                 " differs: the operator itself computes differently (its kernel, dtype or implementation)";
  } else if (e.upstream_identical) {
    d.cause = Cause::kOperands;
    d.rule = "every earlier output equal, a tensor input differs";
    d.sentence = "every output before " + api + " is equal on both sides" + as_told + ", yet its tensor input " +
                 Names(inputs) + " differs: the call passes different operands (a change at the call line, or in "
                 "code msprobe does not dump between the last dumped op and this call)";
    if (!arguments.empty()) d.sentence += "; its argument " + Arguments(arguments) + " as well";
  } else {
    d.cause = Cause::kUpstream;
    d.rule = "a tensor input differs after earlier outputs differed without counting as a divergence";
    d.sentence = api + "'s tensor input " + Names(inputs) + " already differs: earlier outputs differed within the "
                 "criterion (the first at " + std::string(earlier_api) + "), and here the difference crosses it";
  }
  return d;
}

json EvidenceJson(const Evidence& e, const std::vector<RowText>& inputs, const std::vector<RowText>& arguments,
                  const std::vector<RowText>& outputs, const std::vector<std::string>& msprobe_passes,
                  std::string_view earlier_api) {
  auto names = [](const std::vector<RowText>& rows) {
    json out = json::array();
    for (const RowText& r : rows) {
      json item = {{"name", r.name}};
      if (r.candidate) item["candidate"] = *r.candidate;
      if (r.baseline) item["baseline"] = *r.baseline;
      if (!r.detail.empty()) item["detail"] = r.detail;
      out.push_back(item);
    }
    return out;
  };
  return {{"any_matched", e.any_matched},
          {"upstream_identical", e.upstream_identical},
          {"earlier_difference", e.earlier_difference ? json(std::string(earlier_api)) : json(nullptr)},
          {"differing_inputs", names(inputs)},
          {"differing_arguments", names(arguments)},
          {"differing_outputs", names(outputs)},
          {"unmatched_rows", e.unmatched_rows.size()},
          {"msprobe_passes", msprobe_passes},
          {"equal_means", e.statistics_only ? "the four statistics are equal" : "the CRC-32 is equal"}};
}

}  // namespace parity::msprobe
