#include "domain/report/render.h"

#include <chrono>
#include <fstream>

#include "domain/ledger/ledger.h"
#include "domain/report/document.h"
#include "domain/report/html.h"
#include "domain/report/pdf.h"
#include "domain/report/raster.h"
#include "domain/report/reproduce.h"
#include "support/file_read.h"
#include "support/safe_file.h"

namespace parity::report {

namespace fs = std::filesystem;

namespace {

constexpr double kChartW = 720, kChartH = 340, kPngScale = 2;  // 1440 x 680 pixels
constexpr uint64_t kMaxCsvBytes = 1u << 30;  // a per-step CSV of a very long run

// Every output lands in <report_dir>/report/, written through no symlink (a report
// directory inside a cloned repository may hold planted links).
Status WriteReportFile(const fs::path& report_dir, const fs::path& path, const std::string& data) {
  return WriteFileUnder(report_dir, RelativeUnder(report_dir, path), data);
}

std::string Rel(const fs::path& p, const fs::path& base) { return p.lexically_relative(base).string(); }

std::string PlainText(const ReportModel& model, const std::string& verdict, const std::string& title) {
  std::string text = title + "\n\nverdict: " + verdict + "\n";
  for (const auto& c : model.cases) {
    text += "- " + c.name + ": " + c.report["verdict"].get<std::string>() + " - " +
            c.report["verdict_reason"].get<std::string>() + "\n";
  }
  text += "\nThe full report is the HTML part of this message; the PDF, charts, CSV and logs are attached.\n";
  return text;
}

struct Attachment {
  fs::path path;
  std::string type;
};

Result<RenderResult> Mail(const RenderOptions& o, const ReportModel& model, const Document& doc,
                          const std::vector<std::pair<std::string, std::string>>& pngs, const fs::path& pdf,
                          const fs::path& summary_pdf, const std::vector<fs::path>& csvs, RenderResult result) {
  MailMessage m;
  m.subject = o.mail_subject.empty() ? "[parity " + result.verdict + "] " + doc.title : o.mail_subject;
  HtmlOptions html;
  html.logs_attached = true;
  for (const auto& [id, bytes] : pngs) {
    std::string cid = id + "@parity";
    html.chart_cids[id] = cid;
    m.inline_images.push_back({id + ".png", "image/png", bytes, cid});
  }
  m.html = RenderHtml(doc, html);
  m.text = PlainText(model, result.verdict, doc.title);

  std::vector<Attachment> files = {{pdf, "application/pdf"}, {summary_pdf, "application/pdf"}};
  if (!model.infra_tarball.empty()) files.push_back({model.infra_tarball, "application/gzip"});
  for (const auto& c : csvs) files.push_back({c, "text/csv"});
  for (const auto& log : model.logs) files.push_back({log.path, "text/plain"});
  size_t total = 0;
  std::string sizes;
  for (const auto& [id, bytes] : pngs) total += bytes.size();
  for (const auto& f : files) {
    std::error_code ec;
    total += fs::file_size(f.path, ec);
    sizes += "\n" + f.path.string() + ": " + std::to_string(fs::file_size(f.path, ec)) + " bytes";
  }
  if (total > o.mail_attachment_limit) {
    return InvalidArgument("mail: the charts and attachments come to " + std::to_string(total) +
                           " bytes, more than mail.attachment_limit_mb allows")
        .WithEvidence("attachments", sizes)
        .WithHint("raise mail.attachment_limit_mb if the server accepts it, or share the report directory instead");
  }
  json names = json::array();
  for (const auto& f : files) {
    PARITY_ASSIGN_OR_RETURN(std::string data, ReadFileLimited(f.path, kMaxReportFileBytes));
    m.attachments.push_back({f.path.filename().string(), f.type, std::move(data), ""});
    names.push_back(f.path.filename().string());
  }
  for (const auto& img : m.inline_images) names.push_back(img.filename);

  ledger::Entry entry;
  entry.tool = "render_report";
  entry.action = "mail";
  entry.inputs = {{"server", o.mail->url}, {"from", o.mail->from}, {"to", o.mail->to},
                  {"username", o.mail->username}, {"password_env", o.mail->password_env},
                  {"starttls", o.mail->starttls}, {"ca_file", o.mail->ca_file}};
  auto start = std::chrono::steady_clock::now();
  Status sent = SendMail(*o.mail, m, o.cancel);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  entry.outputs = {{"attachments", names}};
  entry.outcome = {{"status", sent.ok() ? "ok" : sent.kind() == ErrorKind::kCancelled ? "cancelled" : "failed"},
                   {"duration_s", secs},
                   {"message", sent.ok() ? "mailed to " + std::to_string(o.mail->to.size()) + " recipient(s)" : sent.message()}};
  auto id = ledger::Append(o.report_dir, entry);
  PARITY_RETURN_IF_ERROR(sent);
  if (!id.ok()) return std::move(id).take_status().Context("recording the mail in the ledger");
  result.mail = {{"to", o.mail->to}, {"subject", m.subject}, {"attachments", names}, {"ledger_id", *id}};
  return result;
}

}  // namespace

Result<RenderResult> RenderReport(const RenderOptions& o) {
  for (const auto& f : o.formats) {
    if (!kAllFormats.count(f)) return InvalidArgument("formats: unknown format \"" + f + "\" (html, pdf, png, csv, reproduce)");
  }
  auto has = [&](const char* f) { return o.formats.count(f) > 0; };
  const bool mail = o.mail.has_value();
  if (mail) PARITY_RETURN_IF_ERROR(ValidateMailServer(*o.mail));
  const double total = 7;
  auto progress = [&](double done, const std::string& what) {
    if (o.progress) o.progress(done, total, what);
  };
  auto start = std::chrono::steady_clock::now();

  progress(0, "reading the report directory");
  PARITY_ASSIGN_OR_RETURN(ReportModel model,
                          LoadReportModel({o.report_dir, o.cases, o.title, o.language}));
  const fs::path out_dir = model.report_dir / "report";
  std::error_code ec;
  PARITY_RETURN_IF_ERROR(MakeDirsUnder(model.report_dir, "report/charts"));
  const std::string now = ledger::NowUtc();

  RenderResult result;
  result.verdict = OverallVerdict(model);
  result.cases = json::array();
  for (const auto& c : model.cases) {
    result.cases.push_back({{"case", c.name}, {"verdict", c.report["verdict"]}, {"verdict_reason", c.report["verdict_reason"]}});
  }
  result.outputs = json::object();

  json reproduce;
  if (has("reproduce")) {
    progress(1, "building reproduce.json from the ledger");
    PARITY_ASSIGN_OR_RETURN(reproduce, BuildReproduce(model, now));
    fs::path path = out_dir / "reproduce.json";
    PARITY_RETURN_IF_ERROR(WriteReportFile(model.report_dir, path, reproduce.dump(2) + "\n"));
    result.outputs["reproduce"] = path.string();
  }
  Document doc = BuildDocument(model, reproduce, now);
  if (o.cancel.cancelled()) return Cancelled();

  std::vector<std::pair<std::string, std::string>> pngs;
  if (has("png") || mail) {
    progress(2, "drawing PNG charts");
    result.outputs["charts"] = json::array();
    for (const Block* b : Charts(doc)) {
      PARITY_ASSIGN_OR_RETURN(std::string png, ChartToPng(b->chart, kChartW, kChartH, kPngScale));
      fs::path path = out_dir / "charts" / (b->chart_id + ".png");
      PARITY_RETURN_IF_ERROR(WriteReportFile(model.report_dir, path, png));
      result.outputs["charts"].push_back(path.string());
      pngs.emplace_back(b->chart_id, std::move(png));
      if (o.cancel.cancelled()) return Cancelled();
    }
  }
  if (has("html")) {
    progress(3, "writing the HTML report");
    fs::path path = out_dir / "report.html";
    PARITY_RETURN_IF_ERROR(WriteReportFile(model.report_dir, path, RenderHtml(doc)));
    result.outputs["html"] = path.string();
  }
  fs::path pdf = out_dir / "numerical_stability_report.pdf";
  fs::path summary_pdf = out_dir / "pr_summary.pdf";
  if (has("pdf") || mail) {
    progress(4, "writing the PDF report");
    PARITY_RETURN_IF_ERROR(RenderPdf(doc, pdf));
    result.outputs["pdf"] = pdf.string();
    PARITY_RETURN_IF_ERROR(RenderPdf(PrSummary(doc), summary_pdf));
    result.outputs["pr_summary"] = summary_pdf.string();
  }
  std::vector<fs::path> csvs;
  if (has("csv") || mail) {
    progress(5, "copying the per-step CSV files");
    result.outputs["csv"] = json::array();
    for (const auto& c : model.cases) {
      fs::path path = out_dir / (c.name + "_diff_summary.csv");
      PARITY_ASSIGN_OR_RETURN(std::string csv, ReadFileLimited(c.csv_path, kMaxCsvBytes));
      PARITY_RETURN_IF_ERROR(WriteReportFile(model.report_dir, path, csv));
      result.outputs["csv"].push_back(path.string());
      csvs.push_back(path);
    }
  }
  if (mail && !(has("png") && has("pdf") && has("csv"))) {
    result.notes.push_back("mail needs the PNG charts, the PDF and the CSV files, so they were written too");
  }

  ledger::Entry entry;
  entry.tool = "render_report";
  entry.action = "render";
  json formats = json::array();
  for (const auto& f : o.formats) formats.push_back(f);
  json case_names = json::array();
  for (const auto& c : model.cases) case_names.push_back(c.name);
  entry.inputs = {{"report_dir", model.report_dir.string()}, {"cases", case_names}, {"title", doc.title},
                  {"language", o.language == Language::kZh ? "zh" : "en"}, {"formats", formats}};
  json outputs = json::object();
  for (const auto& [k, v] : result.outputs.items()) {
    if (v.is_string()) outputs[k] = Rel(v.get<std::string>(), model.report_dir);
    else {
      outputs[k] = json::array();
      for (const auto& p : v) outputs[k].push_back(Rel(p.get<std::string>(), model.report_dir));
    }
  }
  entry.outputs = outputs;
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  entry.outcome = {{"status", "ok"}, {"duration_s", secs}, {"message", "verdict " + result.verdict}};
  PARITY_ASSIGN_OR_RETURN(result.ledger_id, ledger::Append(model.report_dir, entry));

  if (mail) {
    progress(6, "sending the mail");
    return Mail(o, model, doc, pngs, pdf, summary_pdf, csvs, std::move(result));
  }
  progress(7, "done");
  return result;
}

}  // namespace parity::report
