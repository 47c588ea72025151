// The pieces of `parity hunt` for remote sides and different repositories: the shadow
// repository built from `git archive` of two different repositories (reproducible commit
// ids, the sources' trees, the test tree's uncommitted files), the same over SSH against a
// real sshd on loopback (side resolution, the remote worktree parity makes and removes, the
// fresh-dump fetch, the probes' upload and the remote revert's verification), and the pure
// parsers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "domain/workflow/hunt_remote.h"
#include "domain/workflow/hunt_shadow.h"
#include "support/subprocess.h"
#include "tests/common/git_cli.h"
#include "tests/common/temp_dir.h"
#include "tests/run/sshd_fixture.h"

namespace parity::workflow {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using testing_support::TempDir;
constexpr auto& Write = testing_support::WriteFile;

using testing_support::Git;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void MakeRepo(const fs::path& repo, const std::string& model) {
  fs::create_directories(repo);
  Git(repo, {"init", "-q", "-b", "main"});
  Write(repo / "model.py", model);
  Write(repo / "run.sh", "echo run\n");
  Write(repo / ".gitignore", "outputs/\n");
  Git(repo, {"add", "-A"});
  Git(repo, {"commit", "-q", "-m", "c"});
}

TEST(HuntShadow, ParsesGitDiffRaw) {
  using namespace std::string_literals;
  std::string raw = ":100644 100755 abc 000 M\0run.sh\0"s + ":100644 000000 abc 000 D\0gone dir/x.py\0"s;
  auto files = ParseRawDiff(raw);
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  ASSERT_EQ(files->size(), 2u);
  EXPECT_EQ((*files)[0].path, "run.sh");
  EXPECT_EQ((*files)[0].state, "modified");
  EXPECT_EQ((*files)[0].mode, "100755");
  EXPECT_EQ((*files)[1].path, "gone dir/x.py");
  EXPECT_EQ((*files)[1].state, "deleted");
  EXPECT_FALSE(ParseRawDiff("garbage\0x\0"s).ok());
}

TEST(HuntRemote, VerifyRemoteRestoreNamesWhatMayStillHoldProbes) {
  const std::string a(64, 'a'), b(64, 'b');
  std::vector<std::pair<std::string, std::string>> expected = {{"/w/m.py", a}, {"/w/sub dir/n.py", b}};
  std::string out = a + "  /w/m.py\n" + b + "  /w/sub dir/n.py\n";
  EXPECT_TRUE(VerifyRemoteRestore(expected, out, false, "wt").ok());
  Status helper = VerifyRemoteRestore(expected, out, true, "wt");
  ASSERT_FALSE(helper.ok());
  EXPECT_THAT(helper.message(), HasSubstr("probe helper is still there"));
  Status changed = VerifyRemoteRestore(expected, a + "  /w/m.py\n" + a + "  /w/sub dir/n.py\n", false, "wt");
  ASSERT_FALSE(changed.ok());
  EXPECT_THAT(changed.message(), HasSubstr("/w/sub dir/n.py (sha256 aaaaaaaaaaaa, expected bbbbbbbbbbbb)"));
  EXPECT_THAT(changed.message(), Not(HasSubstr("/w/m.py (")));
  Status missing = VerifyRemoteRestore(expected, a + "  /w/m.py\n", false, "wt");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.message(), HasSubstr("/w/sub dir/n.py (no checksum"));
  // sha256sum escapes a name holding a backslash or a newline.
  std::vector<std::pair<std::string, std::string>> odd = {{"/w/a\\b\nc.py", a}};
  EXPECT_TRUE(VerifyRemoteRestore(odd, "\\" + a + "  /w/a\\\\b\\nc.py\n", false, "wt").ok());
}

// Two different repositories (no common history): the shadow holds both commits with their
// own ids and trees, the same on a rebuild, and the test tree's uncommitted files in its
// working tree.
TEST(HuntShadow, TwoRepositoriesBecomeTwoCommitsWithTheSourcesTrees) {
  TempDir dir;
  const fs::path base = dir.path() / "base", test = dir.path() / "test";
  MakeRepo(base, "def f(x):\n    return g(x)\n");
  MakeRepo(test, "def f(x):\n    return g2(x)\n");
  Write(test / "run.sh", "echo run patched\n");  // uncommitted
  fs::remove(test / ".gitignore");               // deleted, uncommitted
  Write(test / "notes" / "new.py", "x = 1\n");   // untracked
  Write(test / "outputs" / "ignored.bin", "big");
  Write(test / "numerical_report" / "r.json", "{}");  // skipped, like the report directory

  auto local = run::MakeLocalHost();
  ComparerConfig c;
  c.name = "config.json";
  c.baseline.code_path = base.string();
  c.test.code_path = test.string();
  auto b = ResolveSideSource(c, c.baseline, "baseline", *local, {});
  auto t = ResolveSideSource(c, c.test, "test", *local, {});
  ASSERT_TRUE(b.ok() && t.ok()) << b.status().ToString() << t.status().ToString();
  EXPECT_NE(b->common, t->common);
  auto carried = ListUncommitted(*local, *t, {"numerical_report"}, {});
  ASSERT_TRUE(carried.ok()) << carried.status().ToString();
  std::map<std::string, std::string> states;
  for (const auto& f : *carried) states[f.path] = f.state;
  EXPECT_EQ(states, (std::map<std::string, std::string>{
                        {".gitignore", "deleted"}, {"notes/new.py", "untracked"}, {"run.sh", "modified"},
                        {"outputs/ignored.bin", "untracked"}}));  // .gitignore itself is gone from the tree

  const fs::path shadow = dir.path() / "report" / "hunt" / "shadow";
  auto built = BuildShadowRepo(shadow, {local.get(), *b}, {local.get(), *t}, *carried, {});
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_TRUE(built->warnings.empty()) << built->warnings[0];
  EXPECT_EQ(built->baseline_tree, b->tree);
  EXPECT_EQ(built->candidate_tree, t->tree);
  // The sides' own commits, copied byte for byte (the shadow is shallow: no parents).
  EXPECT_EQ(built->baseline_commit, b->commit);
  EXPECT_EQ(built->candidate_commit, t->commit);
  EXPECT_EQ(Git(shadow, {"rev-parse", "parity-baseline"}), b->commit);
  EXPECT_EQ(Git(shadow, {"rev-parse", "HEAD"}), t->commit);
  EXPECT_EQ(Git(shadow, {"log", "--format=%s", "HEAD"}), "c");
  EXPECT_EQ(Git(shadow, {"diff", "--stat", built->baseline_commit, built->candidate_commit, "--", "model.py"}).empty(), false);
  EXPECT_EQ(Slurp(shadow / "run.sh"), "echo run patched\n");
  EXPECT_EQ(Slurp(shadow / "notes" / "new.py"), "x = 1\n");
  EXPECT_FALSE(fs::exists(shadow / ".gitignore"));
  EXPECT_FALSE(fs::exists(shadow / "numerical_report"));
  // The user's trees are untouched (git sees the same state as before).
  EXPECT_EQ(Slurp(test / "run.sh"), "echo run patched\n");
  EXPECT_EQ(Git(base, {"status", "--porcelain"}), "");

  // A worktree left by the earlier shadow goes with it; the same inputs give the same ids.
  Git(shadow, {"worktree", "add", "-q", "--detach", (shadow.parent_path() / "shadow-hunt-baseline").string(),
               built->baseline_commit});
  auto again = BuildShadowRepo(shadow, {local.get(), *b}, {local.get(), *t}, *carried, {});
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->baseline_commit, built->baseline_commit);
  EXPECT_EQ(again->candidate_commit, built->candidate_commit);
  EXPECT_FALSE(fs::exists(shadow.parent_path() / "shadow-hunt-baseline"));
}

// The same over SSH: this machine is the SSH host, and its paths are only ever handed to
// the code under test as remote paths.
class HuntRemoteSsh : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(sshd_.ok()) << sshd_.error();
    auto h = run::ConnectSsh(sshd_.Target());
    ASSERT_TRUE(h.ok()) << h.status().ToString();
    host_ = std::move(h).value();
    remote_repo_ = dir_.path() / "remote" / "repo";
    MakeRepo(remote_repo_, "def f(x):\n    return g(x)\n");
    Write(remote_repo_ / "run.sh", "echo run patched\n");
    c_.name = "config.json";
    c_.test.mode = "remote";
    c_.test.code_path = remote_repo_.string();
    c_.test.ssh = ComparerSsh{"127.0.0.1", "root", sshd_.port(), "pw-NEVER-shown", std::nullopt, std::nullopt,
                              std::nullopt};
  }
  testing::SshdFixture sshd_;
  TempDir dir_;
  std::unique_ptr<run::Host> host_;
  fs::path remote_repo_;
  ComparerConfig c_;
};

TEST_F(HuntRemoteSsh, ResolvesTheSideAndBuildsTheShadowFromTheHost) {
  auto t = ResolveSideSource(c_, c_.test, "test", *host_, {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->where, "config.json.test (remote root@127.0.0.1:" + std::to_string(sshd_.port()) + ")");
  EXPECT_EQ(t->top, remote_repo_.string());
  auto carried = ListUncommitted(*host_, *t, {}, {});
  ASSERT_TRUE(carried.ok()) << carried.status().ToString();
  ASSERT_EQ(carried->size(), 1u);
  const fs::path shadow = dir_.path() / "report" / "shadow";
  auto built = BuildShadowRepo(shadow, {host_.get(), *t}, {host_.get(), *t}, *carried, {});
  ASSERT_TRUE(built.ok()) << built.status().ToString();
  EXPECT_EQ(built->candidate_tree, t->tree);
  EXPECT_EQ(Slurp(shadow / "run.sh"), "echo run patched\n");

  ComparerSide bad = c_.test;
  bad.ref = "no-such-branch";
  auto missing = ResolveSideSource(c_, bad, "test", *host_, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("config.json.test.ref"));
  EXPECT_THAT(missing.status().message(), HasSubstr("on root@127.0.0.1"));
}

TEST_F(HuntRemoteSsh, RemoteWorktreeHoldsTheLocalWorktreesBytesAndIsRemovedOnlyWhenParityMadeIt) {
  auto t = ResolveSideSource(c_, c_.test, "test", *host_, {});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // A local worktree of the same commit with a carried change and an untracked file.
  const fs::path local_wt = dir_.path() / "local-wt";
  Git(remote_repo_, {"worktree", "add", "-q", "--detach", local_wt.string(), t->commit});
  Write(local_wt / "run.sh", "echo run patched\n");
  Write(local_wt / "extra dir" / "it's.py", "y = 2\n");
  const std::string remote_wt = (dir_.path() / "remote" / "repo-hunt-test").string();
  Status made = CreateRemoteWorktree(*host_, *t, remote_wt, local_wt, false, {});
  ASSERT_TRUE(made.ok()) << made.ToString();
  EXPECT_EQ(Slurp(fs::path(remote_wt) / "run.sh"), "echo run patched\n");
  EXPECT_EQ(Slurp(fs::path(remote_wt) / "extra dir" / "it's.py"), "y = 2\n");
  EXPECT_EQ(Git(remote_wt, {"rev-parse", "HEAD"}), t->commit);
  // Made again over its own earlier worktree: refused without the user's consent, naming
  // the command; replaced with it.
  Status stale = CreateRemoteWorktree(*host_, *t, remote_wt, local_wt, false, {});
  ASSERT_FALSE(stale.ok());
  EXPECT_THAT(stale.message(), HasSubstr("parity's own worktree of an earlier run"));
  EXPECT_THAT(stale.hint(), HasSubstr("git -C " + t->top + " worktree remove --force " + remote_wt));
  EXPECT_EQ(Slurp(fs::path(remote_wt) / "run.sh"), "echo run patched\n");
  ASSERT_TRUE(CreateRemoteWorktree(*host_, *t, remote_wt, local_wt, true, {}).ok());

  // Probes uploaded, then restored and checked by SHA-256 on the host.
  const std::string original = Slurp(local_wt / "model.py");
  Write(local_wt / "model.py", original + "_pp.probe()  # parity-probe\n");
  Write(local_wt / "_parity_probe.py", "def probe(): pass\n");
  ASSERT_TRUE(UploadInjected(*host_, local_wt, remote_wt, {"model.py"}, "_parity_probe.py", {}).ok());
  EXPECT_THAT(Slurp(fs::path(remote_wt) / "model.py"), HasSubstr("parity-probe"));
  Write(local_wt / "model.py", original);
  fs::remove(local_wt / "_parity_probe.py");
  auto restored = RestoreRemote(*host_, local_wt, remote_wt, {"model.py"}, "_parity_probe.py", {});
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_EQ(Slurp(fs::path(remote_wt) / "model.py"), original);
  EXPECT_FALSE(fs::exists(fs::path(remote_wt) / "_parity_probe.py"));
  EXPECT_EQ((*restored)["files"][0]["path"], "model.py");

  // A remote file that cannot be restored (a folder is in its place) and a local one that is
  // gone: the other file is still restored, and the error names both.
  fs::remove(fs::path(remote_wt) / "run.sh");
  fs::create_directories(fs::path(remote_wt) / "run.sh");
  Write(fs::path(remote_wt) / "model.py", "probed\n");
  auto unverified = RestoreRemote(*host_, local_wt, remote_wt, {"run.sh", "missing.py", "model.py"}, "_parity_probe.py", {});
  ASSERT_FALSE(unverified.ok());
  EXPECT_THAT(unverified.status().message(), HasSubstr("may still hold probes"));
  EXPECT_THAT(unverified.status().message(), HasSubstr(remote_wt + "/run.sh (no checksum"));
  EXPECT_THAT(unverified.status().message(), HasSubstr(remote_wt + "/missing.py"));
  EXPECT_THAT(unverified.status().message(), Not(HasSubstr(remote_wt + "/model.py")));
  EXPECT_EQ(Slurp(fs::path(remote_wt) / "model.py"), original);

  ASSERT_TRUE(RemoveRemoteWorktree(*host_, t->top, remote_wt, {}).ok());
  EXPECT_FALSE(fs::exists(remote_wt));
  EXPECT_THAT(Git(remote_repo_, {"worktree", "list"}), Not(HasSubstr("repo-hunt-test")));
  // Not parity's: refused, untouched.
  const fs::path foreign = dir_.path() / "remote" / "foreign";
  Git(remote_repo_, {"worktree", "add", "-q", "--detach", foreign.string(), t->commit});
  Status refused = CreateRemoteWorktree(*host_, *t, foreign.string(), local_wt, true, {});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.message(), HasSubstr("not a worktree parity made"));
  EXPECT_FALSE(RemoveRemoteWorktree(*host_, t->top, foreign.string(), {}).ok());
  EXPECT_TRUE(fs::exists(foreign / "model.py"));
}

TEST_F(HuntRemoteSsh, OnlyAFreshRankZeroDumpIsFetchedWithItsLayout) {
  const fs::path dumps = dir_.path() / "remote" / "dumps";
  Write(dumps / "step0" / "rank0" / "dump.json", "{\"old\": 1}");
  Write(dumps / "step0" / "rank0" / "stack.json", "{}");
  auto before = RemoteClock(*host_);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  fs::last_write_time(dumps / "step0" / "rank0" / "dump.json", fs::file_time_type::clock::now() - std::chrono::hours(1));
  auto stale = FetchFreshDumps(*host_, dumps.string(), *before, dir_.path() / "fetched", {});
  ASSERT_FALSE(stale.ok());
  EXPECT_THAT(stale.status().message(), HasSubstr("wrote no rank-0 msprobe dump.json"));
  EXPECT_THAT(stale.status().message(), HasSubstr(dumps.string()));
  auto absent = FetchFreshDumps(*host_, (dumps / "none").string(), *before, dir_.path() / "fetched", {});
  ASSERT_FALSE(absent.ok());

  Write(dumps / "step0" / "rank0" / "dump.json", "{\"new\": 1}");
  Write(dumps / "step0" / "rank0" / "construct.json", "{}");
  Write(dumps / "step0" / "rank1" / "dump.json", "{}");  // another rank: not fetched
  Write(dumps / "step0" / "rank0" / "dump_tensor_data" / "x.pt", "t");
  auto fresh = FetchFreshDumps(*host_, dumps.string(), *before, dir_.path() / "fetched", {});
  ASSERT_TRUE(fresh.ok()) << fresh.status().ToString();
  EXPECT_EQ(fresh->size(), 3u) << fresh->dump();
  EXPECT_EQ(Slurp(dir_.path() / "fetched" / "step0" / "rank0" / "dump.json"), "{\"new\": 1}");
  EXPECT_TRUE(fs::exists(dir_.path() / "fetched" / "step0" / "rank0" / "stack.json"));
  EXPECT_FALSE(fs::exists(dir_.path() / "fetched" / "step0" / "rank1"));

  auto newest = NewestRemoteFile(*host_, dumps.string(), *before, 3, "cons", {});
  ASSERT_TRUE(newest.ok() && newest->has_value());
  EXPECT_EQ((*newest)->path, (dumps / "step0" / "rank0" / "construct.json").string());
}

TEST_F(HuntRemoteSsh, ThePasswordOnlyTravelsThroughAnEnvironmentVariable) {
  auto target = HuntSshTarget(c_, c_.test, "test");
  ASSERT_TRUE(target.ok()) << target.status().ToString();
  ASSERT_TRUE(target->password_env.has_value());
  EXPECT_EQ(*target->password_env, "PARITY_HUNT_SSH_PASSWORD_TEST");
  EXPECT_STREQ(std::getenv("PARITY_HUNT_SSH_PASSWORD_TEST"), "pw-NEVER-shown");
  json args = RunTrainingRemoteArgs(*target);
  EXPECT_EQ(args.dump().find("pw-NEVER-shown"), std::string::npos);
  EXPECT_EQ(args["ssh"]["password_env"], "PARITY_HUNT_SSH_PASSWORD_TEST");
  EXPECT_EQ(Redacted(c_).dump().find("pw-NEVER-shown"), std::string::npos);
  // An unknown host key: refused with the fingerprint, and the hint names the config field.
  run::SshTarget unknown = *target;
  unknown.known_hosts = dir_.path() / "empty_known_hosts";
  Write(*unknown.known_hosts, "");
  auto refused = ConnectSide(unknown, "config.json.test");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("config.json.test"));
  EXPECT_THAT(refused.status().hint(), HasSubstr("ssh.known_hosts"));
  EXPECT_THAT(refused.status().ToString(), HasSubstr("SHA256:"));
}

}  // namespace
}  // namespace parity::workflow
