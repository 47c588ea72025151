// Mail delivered to a real SMTP server on loopback (Debian's aiosmtpd), then parsed with
// Python's email package the way a mail client reads it.
#include <signal.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "domain/report/render.h"
#include "e2e_util.h"

namespace parity::report {
namespace {

namespace fs = std::filesystem;
using testing::ReadJson;
using testing::RunOrFail;

// The SMTP sink runs as a child for the duration of a test.
class SmtpSink {
 public:
  // `options`: smtp_sink.py's --starttls/--smtps/--auth arguments.
  explicit SmtpSink(fs::path dir, std::vector<std::string> options = {})
      : dir_(std::move(dir)), port_(testing::FreePort()) {
    thread_ = std::thread([this, options] {
      ProcessOptions p;
      p.argv = {"/usr/bin/python3", std::string(PARITY_REPORT_TEST_DIR) + "/smtp_sink.py", std::to_string(port_),
                dir_.string()};
      p.argv.insert(p.argv.end(), options.begin(), options.end());
      p.merge_stderr = true;
      p.timeout = std::chrono::seconds(300);
      p.cancel = stop_.token();
      auto r = RunProcess(p);
      output_ = r.ok() ? r->out : r.status().ToString();
    });
    for (int i = 0; i < 200 && !fs::exists(dir_ / "ready"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ~SmtpSink() {
    stop_.Cancel();
    thread_.join();
  }
  bool ready() const { return fs::exists(dir_ / "ready"); }
  const std::string& output() const { return output_; }
  int port() const { return port_; }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
  int port_;
  CancellationSource stop_;
  std::thread thread_;
  std::string output_;
};

TEST(Mail, DeliveredWithCidChartsAndEveryAttachment) {
  fs::path dir = testing::CopyReportDir("gelu_tanh", "mail");
  SmtpSink sink(dir.parent_path() / "smtp");
  ASSERT_TRUE(sink.ready()) << "aiosmtpd did not start";
  RenderOptions o;
  o.report_dir = dir;
  o.formats = {"html", "reproduce"};
  MailServer m;
  m.url = "smtp://127.0.0.1:" + std::to_string(sink.port());
  m.from = "parity@example.com";
  m.to = {"reviewer@example.com", "lead@example.com"};
  m.starttls = false;  // loopback only
  o.mail = m;
  auto r = RenderReport(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(fs::exists(sink.dir() / "1.eml")) << "no message received";

  json envelope = ReadJson(sink.dir() / "1.json");
  EXPECT_EQ(envelope["mail_from"], "parity@example.com");
  EXPECT_EQ(envelope["rcpt_tos"], json({"reviewer@example.com", "lead@example.com"}));

  auto parsed = RunOrFail({"/usr/bin/python3", std::string(PARITY_REPORT_TEST_DIR) + "/parse_mail.py",
                           (sink.dir() / "1.eml").string()});
  ASSERT_TRUE(parsed.success()) << parsed.out;
  json mail = json::parse(parsed.out);
  EXPECT_TRUE(mail["has_html"]);
  EXPECT_TRUE(mail["has_text"]);
  EXPECT_EQ(mail["content_type"], "multipart/mixed");
  EXPECT_NE(mail["subject"].get<std::string>().find("FAIL"), std::string::npos) << mail["subject"];
  EXPECT_NE(mail["html"].get<std::string>().find("数值精度对比报告"), std::string::npos);
  EXPECT_EQ(mail["html"].get<std::string>().find("<svg"), std::string::npos) << "mail clients need PNG, not SVG";
  // Every chart the HTML shows resolves to an image part carrying that Content-ID: the
  // case's three and the hunt's step x layer heatmap.
  ASSERT_EQ(mail["cid_refs"].size(), 4u);
  for (const auto& cid : mail["cid_refs"]) {
    ASSERT_TRUE(mail["content_ids"].contains(cid.get<std::string>())) << cid;
    EXPECT_EQ(mail["content_ids"][cid.get<std::string>()]["type"], "image/png");
    EXPECT_GT(mail["content_ids"][cid.get<std::string>()]["bytes"].get<int>(), 1000);
  }
  std::map<std::string, int> attached;
  for (const auto& a : mail["attachments"]) attached[a["filename"]] = a["bytes"];
  // The skill's attachments: both PDFs, infra tarball, CSV, every training log.
  const std::set<std::string> in_report = {"numerical_stability_report.pdf", "pr_summary.pdf",
                                           "toy_small_diff_summary.csv"};
  for (const char* name : {"numerical_stability_report.pdf", "pr_summary.pdf", "infra_files.tar.gz",
                           "toy_small_diff_summary.csv", "baseline_toy_small_train.log",
                           "candidate_toy_small_train.log", "gen_ckpt_toy_small_train.log"}) {
    ASSERT_TRUE(attached.count(name)) << name << " not attached; got " << mail["attachments"].dump();
    EXPECT_EQ(static_cast<uintmax_t>(attached[name]), fs::file_size(in_report.count(name) ? dir / "report" / name : dir / name))
        << name;
  }
  json manifest = ReadJson(dir / "manifest.json");
  EXPECT_EQ(manifest["entries"].back()["action"], "mail");
  EXPECT_EQ(manifest["entries"].back()["outcome"]["status"], "ok");
}

TEST(Mail, PasswordNeverAppearsInErrorsOrTheLedger) {
  fs::path dir = testing::CopyReportDir("refactor", "mail_secret");
  const std::string secret = "s3cr3t-Pa55-do-not-print";
  ::setenv("PARITY_TEST_SMTP_PASSWORD", secret.c_str(), 1);
  RenderOptions o;
  o.report_dir = dir;
  o.formats = {"html"};
  MailServer m;
  m.url = "smtp://127.0.0.1:" + std::to_string(testing::FreePort());  // nobody listens
  m.from = "parity@example.com";
  m.to = {"reviewer@example.com"};
  m.username = "parity";
  m.password_env = "PARITY_TEST_SMTP_PASSWORD";
  m.starttls = false;
  m.timeout = std::chrono::seconds(10);
  o.mail = m;
  auto r = RenderReport(o);
  ::unsetenv("PARITY_TEST_SMTP_PASSWORD");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("sending the report by mail"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(r.status().ToString().find(secret), std::string::npos);
  std::string manifest = testing::Slurp(dir / "manifest.json");
  EXPECT_EQ(manifest.find(secret), std::string::npos);
  EXPECT_NE(manifest.find("PARITY_TEST_SMTP_PASSWORD"), std::string::npos);  // the variable's name is recorded
  EXPECT_NE(manifest.find("\"failed\""), std::string::npos);
}

// A self-signed certificate for 127.0.0.1 made now with openssl: the mailer trusts it only
// through mail.ca_file, so verification stays on.
struct TestCertificate {
  fs::path cert, key;
};

TestCertificate MakeCertificate(const fs::path& dir) {
  fs::create_directories(dir);
  TestCertificate c{dir / "cert.pem", dir / "key.pem"};
  auto r = RunOrFail({"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                      "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost", "-keyout", c.key.string(), "-out",
                      c.cert.string()});
  EXPECT_TRUE(r.success()) << r.out;
  return c;
}

constexpr const char* kPasswordEnv = "PARITY_TEST_TLS_SMTP_PASSWORD";
constexpr const char* kPassword = "tls-Pa55-never-printed";

RenderOptions MailTo(const fs::path& dir, const std::string& url, const TestCertificate* ca) {
  RenderOptions o;
  o.report_dir = dir;
  o.formats = {"html"};
  MailServer m;
  m.url = url;
  m.from = "parity@example.com";
  m.to = {"reviewer@example.com"};
  m.username = "ci-bot";
  m.password_env = kPasswordEnv;
  if (ca) m.ca_file = ca->cert.string();
  m.timeout = std::chrono::seconds(30);
  o.mail = m;
  return o;
}

class TlsMail : public ::testing::TestWithParam<const char*> {};

// STARTTLS on smtp:// and implicit TLS on smtps://, both with AUTH, the certificate checked
// against the CA file.
TEST_P(TlsMail, DeliveredEncryptedAndAuthenticatedWithTheServerVerified) {
  const std::string mode = GetParam();
  fs::path dir = testing::CopyReportDir("refactor", "mail_" + mode);
  TestCertificate cert = MakeCertificate(dir.parent_path() / "tls");
  ::setenv(kPasswordEnv, kPassword, 1);
  SmtpSink sink(dir.parent_path() / "smtp",
                {"--" + mode, cert.cert.string(), cert.key.string(), "--auth", "ci-bot", kPasswordEnv});
  ASSERT_TRUE(sink.ready()) << "aiosmtpd did not start";
  const std::string scheme = mode == "smtps" ? "smtps" : "smtp";
  auto r = RenderReport(MailTo(dir, scheme + "://127.0.0.1:" + std::to_string(sink.port()), &cert));
  ::unsetenv(kPasswordEnv);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(fs::exists(sink.dir() / "1.eml")) << "no message received";
  json envelope = ReadJson(sink.dir() / "1.json");
  EXPECT_EQ(envelope["tls"], true) << "the message travelled unencrypted";
  EXPECT_EQ(envelope["login"], "ci-bot");
  auto parsed = RunOrFail({"/usr/bin/python3", std::string(PARITY_REPORT_TEST_DIR) + "/parse_mail.py",
                           (sink.dir() / "1.eml").string()});
  ASSERT_TRUE(parsed.success()) << parsed.out;
  json mail = json::parse(parsed.out);
  EXPECT_TRUE(mail["has_html"]);
  EXPECT_EQ(mail["cid_refs"].size(), 3u);
  std::string manifest = testing::Slurp(dir / "manifest.json");
  EXPECT_EQ(manifest.find(kPassword), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Modes, TlsMail, ::testing::Values("starttls", "smtps"));

TEST(Mail, UntrustedCertificateIsRefusedAndNothingIsSent) {
  // The same TLS server, but the mailer is not told about its CA: the system's CAs do not
  // know a self-signed certificate, so the connection must fail rather than go on unverified.
  fs::path dir = testing::CopyReportDir("refactor", "mail_untrusted");
  TestCertificate cert = MakeCertificate(dir.parent_path() / "tls");
  ::setenv(kPasswordEnv, kPassword, 1);
  SmtpSink sink(dir.parent_path() / "smtp",
                {"--starttls", cert.cert.string(), cert.key.string(), "--auth", "ci-bot", kPasswordEnv});
  ASSERT_TRUE(sink.ready()) << "aiosmtpd did not start";
  auto r = RenderReport(MailTo(dir, "smtp://127.0.0.1:" + std::to_string(sink.port()), nullptr));
  ::unsetenv(kPasswordEnv);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("certificate"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(r.status().ToString().find(kPassword), std::string::npos);
  EXPECT_FALSE(fs::exists(sink.dir() / "1.eml")) << "a message went to an unverified server";
}

TEST(Mail, WrongPasswordIsAnErrorThatDoesNotShowIt) {
  fs::path dir = testing::CopyReportDir("refactor", "mail_wrong_password");
  TestCertificate cert = MakeCertificate(dir.parent_path() / "tls");
  ::setenv(kPasswordEnv, kPassword, 1);
  SmtpSink sink(dir.parent_path() / "smtp",
                {"--starttls", cert.cert.string(), cert.key.string(), "--auth", "ci-bot", kPasswordEnv});
  ASSERT_TRUE(sink.ready()) << "aiosmtpd did not start";
  ::setenv(kPasswordEnv, "not-the-password", 1);
  auto r = RenderReport(MailTo(dir, "smtp://127.0.0.1:" + std::to_string(sink.port()), &cert));
  ::unsetenv(kPasswordEnv);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("sending the report by mail"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(r.status().ToString().find("not-the-password"), std::string::npos);
  EXPECT_FALSE(fs::exists(sink.dir() / "1.eml"));
}

TEST(Mail, MissingCaFileIsRefusedNamingTheField) {
  MailServer m;
  m.url = "smtps://127.0.0.1:465";
  m.from = "parity@example.com";
  m.to = {"reviewer@example.com"};
  m.ca_file = "/nonexistent/ca.pem";
  Status s = ValidateMailServer(m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("mail.ca_file"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace parity::report
