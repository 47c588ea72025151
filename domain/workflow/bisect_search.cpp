#include "domain/workflow/bisect_search.h"

#include <stdexcept>

namespace parity::workflow {

const char* ProbeVerdictName(ProbeVerdict v) {
  switch (v) {
    case ProbeVerdict::kSame: return "same";
    case ProbeVerdict::kDiffers: return "differs";
    case ProbeVerdict::kSkip: return "skip";
  }
  return "?";
}

const char* BisectAnswerName(BisectAnswer::Kind kind) {
  switch (kind) {
    case BisectAnswer::Kind::kFound: return "found";
    case BisectAnswer::Kind::kSkippedRange: return "skipped_range";
    case BisectAnswer::Kind::kNoChange: return "no_change";
    case BisectAnswer::Kind::kUnknown: return "unknown";
  }
  return "?";
}

BisectSearch::BisectSearch(size_t n) : n_(n), known_(n + 1) {
  if (n == 0) throw std::invalid_argument("BisectSearch: no commit to search");
  known_[0] = ProbeVerdict::kSame;
}

size_t BisectSearch::Hi() const {
  for (size_t i = 1; i <= n_; ++i) {
    if (known_[i] == ProbeVerdict::kDiffers) return i;
  }
  return n_;
}

size_t BisectSearch::Lo() const {
  for (size_t i = Hi(); i-- > 0;) {
    if (known_[i] == ProbeVerdict::kSame) return i;
  }
  return 0;
}

std::vector<size_t> BisectSearch::Untested(size_t lo, size_t hi) const {
  std::vector<size_t> out;
  for (size_t i = lo + 1; i < hi; ++i) {
    if (!known_[i]) out.push_back(i);
  }
  return out;
}

std::vector<size_t> BisectSearch::Next(size_t k) const {
  if (k == 0) k = 1;
  const size_t lo = Lo(), hi = Hi();
  if (known_[n_] == ProbeVerdict::kSame && !HiProven()) return {};  // no change
  std::vector<size_t> untested = Untested(lo, hi);
  if (untested.empty()) {
    if (!HiProven() && !known_[hi]) return {hi};  // every commit before the bad one matched
    return {};
  }
  // k probes cut the m untested commits (m + 1 possible answers with hi) into k + 1 parts.
  const size_t m = untested.size();
  if (k > m) k = m;
  std::vector<size_t> picks;
  for (size_t j = 1; j <= k; ++j) picks.push_back(untested[(j * (m + 1)) / (k + 1) - 1]);
  return picks;
}

void BisectSearch::Record(size_t index, ProbeVerdict verdict) {
  if (index == 0 || index > n_) throw std::out_of_range("BisectSearch::Record: no commit " + std::to_string(index));
  known_[index] = verdict;
}

BisectAnswer BisectSearch::Answer() const {
  BisectAnswer a;
  a.lo = Lo();
  a.hi = Hi();
  if (!HiProven() && known_[n_] == ProbeVerdict::kSame) {
    a.kind = BisectAnswer::Kind::kNoChange;
    a.lo = n_;
    return a;
  }
  for (size_t i = a.lo + 1; i < a.hi; ++i) {
    if (known_[i] == ProbeVerdict::kSkip) a.skipped.push_back(i);
  }
  if (HiProven()) {
    a.kind = a.skipped.empty() ? BisectAnswer::Kind::kFound : BisectAnswer::Kind::kSkippedRange;
  } else {
    if (known_[a.hi] == ProbeVerdict::kSkip) a.skipped.push_back(a.hi);
    a.kind = BisectAnswer::Kind::kUnknown;
  }
  return a;
}

size_t BisectSearch::CandidatesLeft() const { return Answer().kind == BisectAnswer::Kind::kNoChange ? 0 : Hi() - Lo(); }

size_t BisectSearch::ProbesLeftEstimate() const {
  if (Done()) return 0;
  size_t answers = Untested(Lo(), Hi()).size() + 1, probes = 0;
  while ((size_t{1} << probes) < answers) ++probes;
  return probes == 0 ? 1 : probes;  // only the bad commit is left to probe
}

std::vector<std::pair<size_t, size_t>> BisectSearch::NonMonotonic() const {
  std::vector<std::pair<size_t, size_t>> out;
  if (!HiProven()) return out;
  for (size_t i = Hi() + 1; i <= n_; ++i) {
    if (known_[i] == ProbeVerdict::kSame) out.push_back({Hi(), i});
  }
  return out;
}

}  // namespace parity::workflow
