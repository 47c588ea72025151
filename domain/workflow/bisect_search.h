// The search of `parity bisect`, without trainings: which commits to probe next and what
// the probes so far prove. Commits are numbered 1..n along the first-parent history (n is
// the bad commit); 0 is the good commit, known to have the reference numbers.
//
// Each probe ends kSame (its numbers match the good one's under the rule), kDiffers, or
// kSkip (it does not build or run, or the rule could not decide: git bisect's "skip").
// The search keeps lo = the newest commit proven kSame before hi, hi = the oldest commit
// proven kDiffers (or n, not yet proven), and probes only strictly between them, so an
// answer is always a proof: hi differs, lo matches, and every commit between is skipped.
// With k probes at once (k runners), they split the untested commits into k+1 parts; k = 1
// is the plain binary search, ceil(log2 n) probes plus one per skipped commit probed. The
// bad commit itself is probed only when every commit before it matched (lazily, so a
// culprit in the middle costs no training of the bad commit).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace parity::workflow {

enum class ProbeVerdict { kSame, kDiffers, kSkip };

const char* ProbeVerdictName(ProbeVerdict v);  // "same" | "differs" | "skip"

struct BisectAnswer {
  enum class Kind {
    kFound,         // hi is the first commit whose numbers differ; hi - 1 == lo
    kSkippedRange,  // the first differing commit is one of lo+1..hi (all but hi skipped)
    kNoChange,      // the bad commit n itself matches the good one
    kUnknown,       // the bad commit was skipped: the change lies in lo+1..n, unproven
  };
  Kind kind = Kind::kUnknown;
  size_t lo = 0, hi = 0;
  std::vector<size_t> skipped;  // the skipped commits in lo+1..hi-1 (kSkippedRange, kUnknown: ..hi)
};

const char* BisectAnswerName(BisectAnswer::Kind kind);  // "found" | "skipped_range" | "no_change" | "unknown"

class BisectSearch {
 public:
  explicit BisectSearch(size_t n);  // n >= 1

  // The next probes (at most k, none already known), in ascending order; empty when done.
  std::vector<size_t> Next(size_t k) const;
  void Record(size_t index, ProbeVerdict verdict);
  bool Done() const { return Next(1).empty(); }
  BisectAnswer Answer() const;  // meaningful once Done()

  size_t size() const { return n_; }
  std::optional<ProbeVerdict> Known(size_t index) const { return known_.at(index); }
  // What the assistant and the progress bar show: commits that could still be the culprit,
  // and about how many more probes a binary search needs (ceil(log2(left)), skips aside).
  size_t CandidatesLeft() const;
  size_t ProbesLeftEstimate() const;
  // A kSame after a kDiffers (a later commit restored the numbers): the search follows the
  // oldest kDiffers; each such pair is named here so the report can say so.
  std::vector<std::pair<size_t, size_t>> NonMonotonic() const;

 private:
  size_t Lo() const;
  size_t Hi() const;
  bool HiProven() const { return known_[Hi()] == ProbeVerdict::kDiffers; }
  std::vector<size_t> Untested(size_t lo, size_t hi) const;  // strictly between, not known

  size_t n_;
  std::vector<std::optional<ProbeVerdict>> known_;  // 0..n
};

}  // namespace parity::workflow
