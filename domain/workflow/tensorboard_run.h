// Full-precision metrics for the workflow pipelines: torchtitan prints loss with 5 and
// grad_norm with 4 decimals, too coarse to decide bitwise equality, so the pipelines ask a
// torchtitan run for TensorBoard event files in the report directory and compare those.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "support/status.h"

namespace parity::workflow {

// The flags that make a torchtitan run write its event files under `dir`.
std::vector<std::string> TensorBoardFlags(const std::filesystem::path& dir);

// Whether an argv takes torchtitan's dotted options (--training.steps, --model.name, ...),
// so TensorBoardFlags can be appended to it.
bool TakesTorchtitanFlags(const std::vector<std::string>& argv);

// The newest event file under dir (a run writes <dir>/<timestamp>/events.out.tfevents.*);
// an error with a hint when the run wrote none.
Result<std::filesystem::path> NewestEventFile(const std::filesystem::path& dir);

}  // namespace parity::workflow
