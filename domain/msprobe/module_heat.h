// One (step, rank) pair's column of the step x layer heatmap: per layer, in execution order,
// how far the candidate's forward output is from the baseline's. Layers are the modules of
// a mix / L0 dump (its Module.*.forward entries, every call of one module folded into one
// row), or, in an L1 dump (APIs only), the user-code line each API is called from (the
// innermost user frame of its stack). A row's value is the largest relative difference of
// its forward outputs, from msprobe's statistics: |c - b| of Max, Min and Mean over the
// tensor's range (the largest |Max|, |Min| of both sides), of Norm over the larger norm; in
// [0, 1]. It is 1 when an output has no counterpart, its dtype or shape changed, or a value
// is not finite on one side only; md5 mode: 1 when the CRC differs, else 0.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

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
};

HeatColumn LayerHeat(const CompareTable& table, const StackIndex* stacks, const std::vector<std::string>& user_code);

// The heatmap row an entry belongs to: a module entry's own row, an API's innermost module
// (construct.json's parents) in "module" kind, its call site in "call_site" kind; "" when
// none.
std::string HeatKeyOf(std::string_view entry, const std::string& kind,
                      const std::unordered_map<std::string, std::string>& parents, const StackIndex* stacks,
                      const std::vector<std::string>& user_code);

}  // namespace parity::msprobe
