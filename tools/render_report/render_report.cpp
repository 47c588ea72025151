#include "tools/render_report/render_report.h"

#include <cmath>
#include <filesystem>

#include "domain/report/render.h"
#include "support/json_reader.h"
#include "support/url.h"
#include "tools/authorize.h"
#include "tools/render_report/render_report_schema.h"

namespace parity::tools {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

Result<report::RenderOptions> Decode(const json& arguments, const fs::path& default_report_dir) {
  PARITY_RETURN_IF_ERROR(ExpectObject(arguments, "arguments"));
  report::RenderOptions o;
  std::optional<std::string> report_dir, language;
  std::optional<std::vector<std::string>> formats;
  JsonReader r(arguments, "arguments");
  r.Optional("report_dir", report_dir).Optional("cases", o.cases).Optional("title", o.title);
  r.Optional("language", language).Optional("formats", formats);
  if (language) r.OneOf("language", *language, {"zh", "en"});
  if (r.ok() && formats) {
    o.formats.clear();
    for (size_t i = 0; i < formats->size(); ++i) {
      const std::string& f = (*formats)[i];
      if (!report::kAllFormats.count(f)) {
        r.Fail(r.Child("formats") + "[" + std::to_string(i) + "]",
               "unknown format \"" + f + "\" (html, pdf, png, csv, reproduce)");
      }
      o.formats.insert(f);
    }
    if (r.ok() && o.formats.empty()) r.Fail(r.Child("formats"), "empty: name at least one format");
  }
  r.Object("mail", false, [&](JsonReader& m) {
    report::MailServer s;
    double limit_mb = 25;
    int timeout_s = 60;
    m.Required("server", s.url).Required("from", s.from).Required("to", s.to).Optional("username", s.username);
    m.Optional("password_env", s.password_env).Optional("starttls", s.starttls).Optional("subject", o.mail_subject);
    m.Optional("attachment_limit_mb", limit_mb).Optional("timeout_s", timeout_s).Optional("ca_file", s.ca_file);
    if (m.ok() && s.to.empty()) m.Fail(m.Child("to"), "at least one recipient is required");
    if (m.ok() && !(limit_mb > 0)) m.Fail(m.Child("attachment_limit_mb"), "must be greater than 0");
    if (m.ok() && (timeout_s < 1 || timeout_s > 3600)) m.Fail(m.Child("timeout_s"), "must be between 1 and 3600");
    s.timeout = std::chrono::seconds(timeout_s);
    o.mail_attachment_limit = static_cast<size_t>(std::llround(limit_mb * 1024 * 1024));
    o.mail = std::move(s);
  });
  PARITY_RETURN_IF_ERROR(r.Finish());
  o.report_dir = report_dir ? fs::path(*report_dir) : default_report_dir;
  if (o.report_dir.empty()) o.report_dir = fs::current_path() / "numerical_report";
  o.language = language && *language == "en" ? report::Language::kEn : report::Language::kZh;
  if (o.mail) {
    Status s = report::ValidateMailServer(*o.mail);
    if (!s.ok()) return std::move(s).Context("arguments");
  }
  return o;
}

std::string Summary(const report::RenderResult& r) {
  std::string s = "render_report: overall verdict " + r.verdict + " over " + std::to_string(r.cases.size()) + " case(s).";
  for (const auto& c : r.cases) {
    s += "\n- " + c["case"].get<std::string>() + ": " + c["verdict"].get<std::string>() + " (" +
         c["verdict_reason"].get<std::string>() + ")";
  }
  if (r.outputs.contains("html")) s += "\nHTML: " + r.outputs["html"].get<std::string>();
  if (r.outputs.contains("pdf")) s += "\nPDF: " + r.outputs["pdf"].get<std::string>();
  if (r.outputs.contains("pr_summary")) s += "\nPR summary: " + r.outputs["pr_summary"].get<std::string>();
  if (!r.mail.is_null()) s += "\nMailed to " + std::to_string(r.mail["to"].size()) + " recipient(s).";
  for (const auto& n : r.notes) s += "\nNote: " + n;
  return s;
}

mcp::ToolResult Handle(const json& arguments, mcp::ToolContext& ctx) {
  auto options = Decode(arguments, ctx.report_dir());
  if (!options.ok()) return mcp::ToolResult::Error(options.status());
  // The report directory is written inside the user's folders; the mail (the report, the
  // logs, and the SMTP password) goes only to a server and recipients the policy names
  // with that password, or that the user accepts now.
  auto allowed = AuthorizePath(ctx, options->report_dir, policy::Access::kWrite, "arguments.report_dir");
  if (!allowed.ok()) return mcp::ToolResult::Error(allowed.status());
  if (options->mail) {
    const report::MailServer& m = *options->mail;
    if (!m.ca_file.empty()) {
      auto ca = AuthorizePath(ctx, m.ca_file, policy::Access::kRead, "arguments.mail.ca_file");
      if (!ca.ok()) return mcp::ToolResult::Error(ca.status());
    }
    policy::SendAction send{policy::SendAction::Kind::kMail, "render_report: the report with its charts, PDF and "
                            "training logs attached, by mail", m.url, UrlHost(m.url), UrlPort(m.url), m.to,
                            m.username.empty() ? std::string() : m.password_env};
    if (Status s = Authorize(ctx, "render_report", {Judge(ctx.policy(), send)}); !s.ok()) return mcp::ToolResult::Error(s);
  }
  options->cancel = ctx.cancellation();
  options->progress = [&ctx](double done, double total, const std::string& what) { ctx.Progress(done, total, what); };
  auto result = report::RenderReport(*options);
  if (!result.ok()) return mcp::ToolResult::Error(result.status());
  json notes = json::array();
  for (const auto& n : result->notes) notes.push_back(n);
  json out = {{"verdict", result->verdict}, {"cases", result->cases},   {"outputs", result->outputs},
              {"mail", result->mail},       {"notes", notes},           {"ledger_entry", result->ledger_id}};
  return mcp::ToolResult::Structured(out, Summary(*result));
}

}  // namespace

mcp::Tool MakeRenderReportTool() {
  mcp::Tool tool;
  tool.spec.name = "render_report";
  tool.spec.title = "Render the numerical parity report";
  tool.spec.description =
      "Skill steps 6-7: the evidence report a reviewer reads at a glance, from the report directory "
      "(compare_logs' <case>/report.json and diff_summary.csv, the ledger manifest.json, hunt/hunt.json, "
      "infra_files.tar.gz). Writes report/report.html (one self-contained file, charts inline, readable on a "
      "phone and printable), report/numerical_stability_report.pdf (Chinese and Latin text, vector charts, page "
      "numbers), report/charts/*.png (loss and grad_norm overlays, per-step absolute difference on a log scale "
      "with the tolerance line), the per-step CSVs and report/reproduce.json (every command parity actually ran, "
      "from the ledger, validated: no placeholders, real commits and paths; replay with `parity reproduce`). "
      "With mail, sends the HTML with CID-embedded charts and attaches the PDF, CSVs, infra tarball and training "
      "logs; the SMTP password is read from the environment variable named in password_env.";
  tool.spec.input_schema = RenderReportInputSchema();
  tool.spec.output_schema = RenderReportOutputSchema();
  tool.spec.annotations.read_only = false;
  tool.spec.annotations.destructive = false;
  tool.spec.annotations.idempotent = false;  // with mail, every call sends one
  tool.spec.annotations.open_world = true;   // mail
  tool.handler = Handle;
  return tool;
}

}  // namespace parity::tools
