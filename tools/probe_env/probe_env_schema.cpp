#include "tools/probe_env/probe_env_schema.h"

#include "tools/run_training/remote_params.h"

namespace parity::tools {

using json = nlohmann::json;

json ProbeEnvInputSchema() {
  static const json schema = [] {
    json s = json::parse(R"json({
  "type": "object",
  "properties": {
    "python": {"type": "string", "description": "Interpreter whose torch / torch_npu / CUDA are probed (the one the training uses). Default /usr/bin/python3 locally, python3 over SSH."},
    "search_paths": {"type": "array", "items": {"type": "string"}, "description": "Where to look for CANN (version.cfg, ascend_*_install.info, driver/version.info). Default /usr/local/Ascend, /home/*/Ascend, /opt/Ascend, /etc/ascend_install.info; $ASCEND_HOME_PATH and $ASCEND_TOOLKIT_HOME are always searched."},
    "dev_dir": {"type": "string", "default": "/dev", "description": "Directory holding the davinci device nodes."},
    "env": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Variables set for the probe (e.g. those the training will get); they count in the fingerprint."},
    "timeout_s": {"type": "integer", "minimum": 5, "maximum": 3600, "default": 120},
    "compare_with": {"type": "object", "description": "Another probe's fingerprint ({sha256, summary}) or its summary: the result lists the keys that differ."},
    "report_dir": {"type": "string", "description": "Report directory for the ledger; default the server's."},
    "record": {"type": "boolean", "default": true, "description": "Record the probe in the ledger."}
  },
  "additionalProperties": false
})json");
    const json& remote = RemoteSchemaProperties();
    for (auto it = remote.begin(); it != remote.end(); ++it) s["properties"][it.key()] = it.value();
    return s;
  }();
  return schema;
}

json ProbeEnvOutputSchema() {
  static const json schema = json::parse(R"json({
  "type": "object",
  "required": ["host", "accelerator", "anomalies", "fingerprint"],
  "properties": {
    "host": {"type": "string"},
    "hostname": {"type": "string"},
    "accelerator": {"type": "string", "description": "npu, cuda, cpu, or 'npu (torch_npu missing)'"},
    "cann": {"type": "object"},
    "driver": {"type": ["object", "null"]},
    "npu": {"type": "object"},
    "gpu": {"type": "object"},
    "python": {"type": "object"},
    "cpu": {"type": "object"},
    "memory": {"type": "object"},
    "env": {"type": "object"},
    "anomalies": {"type": "array", "items": {"type": "object", "required": ["code", "message", "evidence"],
      "properties": {"code": {"type": "string"}, "message": {"type": "string"},
        "evidence": {"type": "object", "description": "what was found: the paths searched, the command and its output"}}}},
    "fingerprint": {"type": "object", "required": ["sha256", "summary"],
      "properties": {"sha256": {"type": "string"}, "summary": {"type": "object"}}},
    "differences": {"type": "array", "items": {"type": "object"}},
    "raw": {"type": "object"},
    "ledger_entry": {"type": ["string", "null"]}
  }
})json");
  return schema;
}

}  // namespace parity::tools
