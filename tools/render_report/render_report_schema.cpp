#include "tools/render_report/render_report_schema.h"

namespace parity::tools {

using json = nlohmann::json;

json RenderReportInputSchema() {
  static const json schema = json::parse(R"json({
  "type": "object",
  "properties": {
    "report_dir": {"type": "string", "description": "The report directory (holds <case>/report.json, manifest.json, infra_files.tar.gz, hunt/). Default: the server's."},
    "cases": {"type": "array", "items": {"type": "string"}, "description": "Case folders to include, in this order. Default: every <case>/report.json."},
    "title": {"type": "string", "description": "Report title. Default: 数值精度对比报告 / Numerical parity report."},
    "language": {"type": "string", "enum": ["zh", "en"], "default": "zh"},
    "formats": {"type": "array", "items": {"type": "string", "enum": ["html", "pdf", "png", "csv", "reproduce"]},
                "description": "Outputs to write under <report_dir>/report/. Default: all. reproduce needs the ledger."},
    "mail": {
      "type": "object",
      "description": "Skill step 7: send the report. The HTML is the body with the charts as CID images; the PDF, infra tarball, CSVs and training logs are attached.",
      "properties": {
        "server": {"type": "string", "description": "smtps://host:465 (implicit TLS) or smtp://host:587 (STARTTLS required unless starttls is false, which only a loopback host allows)."},
        "from": {"type": "string"},
        "to": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "username": {"type": "string"},
        "password_env": {"type": "string", "description": "Name of the environment variable holding the SMTP password; the password itself is never an argument."},
        "starttls": {"type": "boolean", "default": true},
        "ca_file": {"type": "string", "description": "PEM file of the certificate authorities to trust for the server's certificate (a company CA, a self-signed server). Default: the system's. Verification is never turned off."},
        "subject": {"type": "string"},
        "attachment_limit_mb": {"type": "number", "exclusiveMinimum": 0, "default": 25},
        "timeout_s": {"type": "integer", "minimum": 1, "maximum": 3600, "default": 60}
      },
      "required": ["server", "from", "to"],
      "additionalProperties": false
    }
  },
  "additionalProperties": false
})json");
  return schema;
}

json RenderReportOutputSchema() {
  static const json schema = json::parse(R"json({
  "type": "object",
  "required": ["verdict", "cases", "outputs", "mail", "notes", "ledger_entry"],
  "properties": {
    "verdict": {"type": "string", "enum": ["PASS", "FAIL", "INCONCLUSIVE"]},
    "cases": {"type": "array", "items": {"type": "object", "required": ["case", "verdict", "verdict_reason"],
      "properties": {"case": {"type": "string"}, "verdict": {"type": "string"}, "verdict_reason": {"type": "string"}}}},
    "outputs": {"type": "object", "properties": {
      "html": {"type": "string"}, "pdf": {"type": "string"}, "pr_summary": {"type": "string"}, "reproduce": {"type": "string"},
      "charts": {"type": "array", "items": {"type": "string"}},
      "csv": {"type": "array", "items": {"type": "string"}}}},
    "mail": {"type": ["object", "null"], "properties": {
      "to": {"type": "array", "items": {"type": "string"}}, "subject": {"type": "string"},
      "attachments": {"type": "array", "items": {"type": "string"}}, "ledger_id": {"type": "string"}}},
    "notes": {"type": "array", "items": {"type": "string"}},
    "ledger_entry": {"type": "string"}
  }
})json");
  return schema;
}

}  // namespace parity::tools
