// The sentences of the decision rules (domain/msprobe/decision.h) say what the evidence
// shows, whatever the dump told of the values: an argument is said to differ even when its
// values are unknown, and a value only one side passes is named as such.
#include <gtest/gtest.h>

#include "domain/msprobe/decision.h"

namespace parity::msprobe {
namespace {

Evidence ArgumentEvidence() {
  Evidence e;
  e.differing_arguments = {1};
  e.differing_outputs = {2};
  e.statistics_only = true;
  return e;
}

TEST(Decision, AnArgumentWithKnownValuesNamesBoth) {
  Decision d = Decide(ArgumentEvidence(), "Tensor.__add__.0.forward", {},
                      {{"Tensor.__add__.0.forward.input.1", "1e-06", "1e-05", ""}}, {}, "");
  EXPECT_EQ(d.cause, Cause::kArgument);
  EXPECT_NE(d.sentence.find("Tensor.__add__.0.forward.input.1 is 1e-06 in the candidate, 1e-05 in the baseline"),
            std::string::npos)
      << d.sentence;
}

TEST(Decision, AnArgumentOnlyTheCandidatePassesIsNamedAsAbsentInTheBaseline) {
  Decision d = Decide(ArgumentEvidence(), "Functional.gelu.0.forward", {},
                      {{"Functional.gelu.0.forward.input.approximate", "tanh", std::nullopt, "no baseline counterpart"}},
                      {}, "");
  EXPECT_NE(d.sentence.find("approximate is tanh in the candidate, absent in the baseline"), std::string::npos)
      << d.sentence;
}

TEST(Decision, AnArgumentWhoseValuesTheDumpDoesNotHoldStillDiffers) {
  // Before this rule the sentence read "but its argument X: that value is the cause".
  Decision d = Decide(ArgumentEvidence(), "Torch.foo.0.forward", {},
                      {{"Torch.foo.0.forward.input.2", std::nullopt, std::nullopt, "shape [2] in the candidate, [3] in the baseline"}},
                      {}, "");
  EXPECT_NE(d.sentence.find("Torch.foo.0.forward.input.2 differs (shape [2] in the candidate, [3] in the baseline)"),
            std::string::npos)
      << d.sentence;
}

}  // namespace
}  // namespace parity::msprobe
