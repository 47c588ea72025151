#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "domain/report/mail.h"
#include "domain/report/reproduce.h"
#include "domain/report/tarball.h"

namespace parity::report {
namespace {

namespace fs = std::filesystem;

fs::path TempDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("parity_report_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(Tarball, ListsRegularFilesWrittenByGnuTar) {
  fs::path dir = TempDir("tar");
  fs::create_directories(dir / "src" / "scripts");
  std::string deep = std::string(120, 'd');
  fs::create_directories(dir / "src" / deep);
  std::ofstream(dir / "src" / "scripts" / "run_train.sh") << "echo hi\n";
  std::ofstream(dir / "src" / deep / "long_name_file.txt") << "x\n";
  std::string cmd = "tar -czf '" + (dir / "t.tar.gz").string() + "' -C '" + (dir / "src").string() + "' scripts " + deep;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  auto files = ListTarGz(dir / "t.tar.gz");
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0], "scripts/run_train.sh");
  EXPECT_EQ((*files)[1], deep + "/long_name_file.txt");
  EXPECT_FALSE(ListTarGz(dir / "missing.tar.gz").ok());
  fs::remove_all(dir);
}

TEST(Mail, MimeNestsRelatedImagesAndAttachments) {
  MailServer s;
  s.url = "smtp://127.0.0.1:25";
  s.from = "parity@example.com";
  s.to = {"a@example.com", "b@example.com"};
  MailMessage m;
  m.subject = "数值精度 PASS";
  m.html = "<img src=\"cid:c1@parity\">";
  m.text = "plain";
  m.inline_images.push_back({"c1.png", "image/png", std::string("\x89PNG\r\n", 6), "c1@parity"});
  m.attachments.push_back({"diff_summary.csv", "text/csv", "step,loss\n1,2\n", ""});
  std::string mime = BuildMime(s, m, "seed1");
  EXPECT_NE(mime.find("Subject: =?UTF-8?B?"), std::string::npos);
  EXPECT_NE(mime.find("To: a@example.com, b@example.com"), std::string::npos);
  EXPECT_NE(mime.find("multipart/related"), std::string::npos);
  EXPECT_NE(mime.find("Content-ID: <c1@parity>"), std::string::npos);
  EXPECT_NE(mime.find("attachment; filename=\"diff_summary.csv\""), std::string::npos);
  EXPECT_LT(mime.find("--related-seed1--"), mime.find("--mixed-seed1\r\nContent-Type: text/csv"));
  for (size_t pos = 0, next; (next = mime.find("\r\n", pos)) != std::string::npos; pos = next + 2) {
    EXPECT_LE(next - pos, 998u) << "line longer than RFC 5322 allows";
  }
}

TEST(Mail, RefusesPlainSmtpOffLoopbackAndMissingPasswordVariable) {
  MailServer s;
  s.url = "smtp://mail.example.com:25";
  s.from = "p@example.com";
  s.to = {"a@example.com"};
  s.starttls = false;
  Status st = ValidateMailServer(s);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("mail.starttls"), std::string::npos);
  s.url = "smtp://127.0.0.1:2525";
  EXPECT_TRUE(ValidateMailServer(s).ok());
  s.username = "bob";
  s.password_env = "PARITY_TEST_SURELY_UNSET_VARIABLE";
  st = ValidateMailServer(s);
  EXPECT_NE(st.message().find("PARITY_TEST_SURELY_UNSET_VARIABLE"), std::string::npos);
  s.url = "http://x";
  EXPECT_NE(ValidateMailServer(s).message().find("mail.server"), std::string::npos);
}

json MinimalReproduce() {
  return json::parse(R"({
    "schema": "parity.reproduce/1", "generated": "2026-11-30T05:00:00Z", "report_dir": "/r/numerical_report",
    "repo": {"path": "/r/repo", "clone_url": "https://example.com/toy.git", "remotes": []},
    "baseline": {"ref": "main", "commit": "d6bad815e9b52ec925daeb5f60b60a01f6ac6aff", "worktree": "/r/wt/b",
                 "on_remotes": ["origin"]},
    "candidate": {"ref": null, "commit": "369868fa6e9eb9fccf5dca15e7c88eb94d952d39", "worktree": null,
                  "on_remotes": ["origin"]},
    "infra": {"tarball": null, "files": []},
    "environment": {},
    "warnings": [],
    "steps": [{"id": "e0001", "tool": "run_training", "action": "train", "side": "baseline", "config": "toy_small",
               "host": "local", "cwd": "/r/wt/b", "env": {"PYTHONHASHSEED": "0", "EMPTY_IS_FINE": ""},
               "argv": ["bash", "scripts/run_train.sh", "--config", "toy_small"], "outputs": {}}]
  })");
}

TEST(Reproduce, AcceptsACompleteFile) {
  Status s = ValidateReproduce(MinimalReproduce(), /*check_world=*/false);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(Reproduce, MissingValueIsRefusedWithItsFieldName) {
  json r = MinimalReproduce();
  r["baseline"].erase("commit");
  Status s = ValidateReproduce(r, false);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("reproduce.baseline.commit"), std::string::npos) << s.message();

  r = MinimalReproduce();
  r["steps"][0].erase("cwd");
  s = ValidateReproduce(r, false);
  EXPECT_NE(s.message().find("reproduce.steps[0].cwd"), std::string::npos) << s.message();

  r = MinimalReproduce();
  r["repo"]["clone_url"] = "";
  s = ValidateReproduce(r, false);
  EXPECT_NE(s.message().find("reproduce.repo.clone_url: empty value"), std::string::npos) << s.message();
}

TEST(Reproduce, PlaceholdersAndFakeCommitsAreRefused) {
  json r = MinimalReproduce();
  r["steps"][0]["argv"][3] = "<config>";
  Status s = ValidateReproduce(r, false);
  EXPECT_NE(s.message().find("reproduce.steps[0].argv[3]: placeholder"), std::string::npos) << s.message();

  r = MinimalReproduce();
  r["candidate"]["commit"] = "HEAD";
  s = ValidateReproduce(r, false);
  EXPECT_NE(s.message().find("reproduce.candidate.commit"), std::string::npos) << s.message();

  r = MinimalReproduce();
  r["steps"][0]["cwd"] = "relative/dir";
  EXPECT_NE(ValidateReproduce(r, false).message().find("not an absolute path"), std::string::npos);

  r = MinimalReproduce();
  Status world = ValidateReproduce(r, /*check_world=*/true);  // /r/repo does not exist
  EXPECT_NE(world.message().find("reproduce.repo.path"), std::string::npos) << world.message();
}

}  // namespace
}  // namespace parity::report
