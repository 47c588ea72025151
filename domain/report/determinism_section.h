// A case's determinism evidence: gate 1 of `parity premerge` (<case>.gate1/report.json, the
// baseline against its own repeat, bitwise) and, for a calibrated comparison, the noise the
// candidate was judged against (report.json "noise": the statistic, K, the first step at
// which the baseline runs differ, each metric's largest envelope and range). Nothing is
// added when the case has neither.
#pragma once

#include "domain/report/document.h"
#include "domain/report/model.h"

namespace parity::report {

void AddDeterminismSection(const CaseData& c, Language language, Document& doc);

}  // namespace parity::report
