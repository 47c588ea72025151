// The root-cause section, from hunt/hunt.json (msprobe_first_diff / parity hunt). A
// parity.hunt/1 file (docs/CONTRACTS.md §4) is laid out field by field; fields it does not
// name, and files of another shape, are shown generically. That file's
// schema belongs to the hunt room; this reads it defensively: the first divergent API,
// whether its inputs were equal, the stack with the user frame marked, the source line,
// the git hunk and the probe evidence when present, and every other scalar field as is.
#pragma once

#include <nlohmann/json.hpp>

#include "domain/report/document.h"

namespace parity::report {

void AddHuntSection(const nlohmann::json& hunt, Language language, Document& doc);

}  // namespace parity::report
