// One (step, rank) pair's column of the step x layer heatmap: per layer, in execution order,
// how far the candidate's forward output is from the baseline's. Layers are the modules of
// a mix / L0 dump (its Module.*.forward entries, every call of one module folded into one
// row), or, in an L1 dump (APIs only), the user-code line each API is called from (the
// innermost user frame of its stack) with the ordinal of that API call among the line's
// calls ("#2": the line's second API call, the GELU of `fc2(gelu(fc1(x)))` or the second
// layer's call of the line), so layers stay apart; only the forward pass (the APIs before
// the first backward entry: what follows, the optimizer's, is no layer). A row's value is the largest relative difference of
// its forward outputs, from msprobe's statistics: |c - b| of Max, Min and Mean over the
// tensor's range (the largest |Max|, |Min| of both sides), of Norm over the larger norm; in
// [0, 1]. It is 1 when an output has no counterpart, its dtype or shape changed, or a value
// is not finite on one side only; md5 mode: 1 when the CRC differs, else 0.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "domain/msprobe/compare.h"
#include "domain/msprobe/stack.h"

namespace parity::msprobe {

struct HeatRow {
  std::string key;    // "layers.0.feed_forward.ParallelFeedForward", or "model.py:37 forward"
  double value = 0;
  bool differs = false;  // any output row not bitwise equal
};

struct HeatColumn {
  std::string kind;  // "module" or "call_site"
  std::vector<HeatRow> rows;
  // The row of `first_entry` (the first divergent API): a module entry's own, an API's
  // innermost module (construct.json's parents), or its call site's; "" when none.
  std::string first_key;
};

HeatColumn LayerHeat(const CompareTable& table, const StackIndex* stacks, const std::vector<std::string>& user_code,
                     const std::unordered_map<std::string, std::string>& parents, std::string_view first_entry);

// The heatmap of hunt.json (docs/CONTRACTS.md §4): one column per (step, rank) pair, rows in
// execution order (first seen), the first divergent API's cell marked (first_pair: the
// column of the pair that diverges first).
struct HeatPair {
  std::optional<int> step, rank;
  HeatColumn column;
};
nlohmann::json HeatmapJson(const std::vector<HeatPair>& pairs, std::optional<size_t> first_pair);

}  // namespace parity::msprobe
