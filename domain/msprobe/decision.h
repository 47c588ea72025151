// Why parity names an API as the first divergence, and in which words: the evidence about
// that API (which of its rows differ, which inputs, which arguments, whether every earlier
// output was equal, which rows msprobe's own rules pass), the rule that picks a cause from
// that evidence, and the sentence the rule allows. Also the noise findings: differences
// the walk does not count, each with the kind of evidence that discounts it.
//
// The rules (the first that applies):
//   unmatched  the API has no counterpart in the baseline: the candidate calls something
//              the baseline does not (a changed sequence of calls).
//   argument   tensor inputs equal, a non-tensor argument differs: that value is the cause;
//              where it comes from is the next question (value_trace.h).
//   operator   tensor inputs and arguments equal, an output differs: the operator itself
//              computes differently (kernel, dtype, implementation).
//   operands   every earlier output equal, a tensor input differs: the call passes other
//              operands (a change at the call line, or in undumped code just before it).
//   upstream   a tensor input differs after earlier outputs that differed without counting
//              as a divergence (within the tolerance): the difference came from there.
// "Equal" is as far as the dump tells: the CRC in md5 mode, the four statistics otherwise.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::msprobe {

enum class Cause { kUnmatched, kArgument, kOperator, kOperands, kUpstream };
const char* CauseName(Cause cause);

// A difference that is not counted as a divergence, and why.
enum class NoiseKind {
  // md5: the CRC one side recorded is the value the tensor had only after a later in-place
  // op changed it (msprobe hashes in a background thread over the tensor's own storage):
  // the later op's output has that CRC on that side and is equal on both sides.
  kCrcAfterInplace,
  // md5: the CRC differs but both sides' statistics (computed synchronously in the hook)
  // are equal, and the difference is not seen again later (no later row holds either
  // side's value, still differing): nothing shows it propagated.
  kCrcUnconfirmed,
  // A tensor input differs while every output of the op is equal: masked by the op.
  kMaskedInput,
};
const char* NoiseKindName(NoiseKind kind);

struct NoiseFinding {
  uint32_t entry = 0;
  size_t row = 0;
  NoiseKind kind = NoiseKind::kMaskedInput;
  std::optional<size_t> later_row;  // kCrcAfterInplace: the in-place op's output row
  bool candidate_side = false;      // kCrcAfterInplace: which side hashed late
};

// What the walk saw at the first divergent API.
struct Evidence {
  std::vector<size_t> differing_outputs;    // outputs / parameter gradients that diverge
  std::vector<size_t> differing_inputs;     // tensor inputs that differ (noise aside)
  std::vector<size_t> differing_arguments;  // non-tensor arguments that differ
  std::vector<size_t> unmatched_rows;       // rows without a baseline counterpart
  bool any_matched = true;                  // false: the API has no counterpart at all
  // Every output of every earlier API equal on both sides (discounted noise aside).
  bool upstream_identical = true;
  // The first earlier API whose outputs differed without counting as a divergence.
  std::optional<uint32_t> earlier_difference;
  // Of the divergent rows, those msprobe's own rules pass (parity counts every difference).
  std::vector<size_t> msprobe_passes;
  bool statistics_only = false;  // summary/tensor mode: "equal" means equal statistics
};

struct Decision {
  Cause cause = Cause::kOperator;
  std::string rule;      // the premises, in words
  std::string sentence;  // what parity says, true given the premises
};

// How the rules name rows and values (from the dumps or a compare result).
struct RowText {
  std::string name;                    // "Tensor.__add__.0.forward.input.1"
  std::optional<std::string> candidate, baseline;  // a non-tensor argument's values
  std::string detail;                  // "dtype torch.float16 vs torch.float32", "" when only values differ
};

Decision Decide(const Evidence& evidence, std::string_view api, const std::vector<RowText>& differing_inputs,
                const std::vector<RowText>& differing_arguments, const std::vector<RowText>& differing_outputs,
                std::string_view earlier_api);

// The evidence as hunt.json carries it (row names, not indices).
nlohmann::json EvidenceJson(const Evidence& evidence, const std::vector<RowText>& differing_inputs,
                            const std::vector<RowText>& differing_arguments,
                            const std::vector<RowText>& differing_outputs, const std::vector<std::string>& msprobe_passes,
                            std::string_view earlier_api);

}  // namespace parity::msprobe
