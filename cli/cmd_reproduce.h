// `parity reproduce REPRODUCE.json|REPORT_DIR --work-dir DIR | --print`: replays a
// reproduce.json written by render_report (domain/report/reproduce.h). Returns the exit
// code: 0 every step succeeded, 1 a step or the setup failed, 2 bad usage.
#pragma once

#include <string>
#include <vector>

namespace parity::cli {

int ReproduceCommand(const std::vector<std::string>& args);

}  // namespace parity::cli
