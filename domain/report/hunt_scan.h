// The root-cause section's map of where and when the numbers part: the step x layer heatmap
// of hunt.json's "heatmap" (one column per (step, rank) pair, the first divergent cell
// framed) and, for a dump tree, the first divergent API of every (step, rank) pair
// ("scan.per_rank"). Both read defensively: a heatmap without rows adds nothing.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

#include "domain/report/document.h"

namespace parity::report {

// The chart of hunt["heatmap"]; nullopt when it has no rows or columns.
std::optional<ChartSpec> HeatmapChart(const nlohmann::json& hunt, bool zh);

void AddHuntScan(const nlohmann::json& hunt, bool zh, Document& doc);

}  // namespace parity::report
