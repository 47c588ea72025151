// MCP tool probe_env: skill step 1 (environment check) on this machine or over SSH. Returns
// the collected facts, every anomaly the skill lists with its evidence (the tool succeeds
// and lists them: judging readiness is the user's call), and the environment fingerprint;
// with compare_with, the keys that differ from another run's fingerprint.
#pragma once

#include "mcp-server/tool.h"

namespace parity::tools {

mcp::Tool MakeProbeEnvTool();

}  // namespace parity::tools
