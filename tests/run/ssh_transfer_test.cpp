// Files over a Host (DownloadFile / UploadFile / ExecToFile), against the real sshd on
// loopback and against the local host: a file larger than Exec's 16 MiB in-memory cap comes
// back intact, a missing file is an error naming the path and cat's exit status, the byte
// limit stops a transfer and leaves no partial file, and a path with spaces and quotes is
// written where it says (it is an argv word, never shell text).
#include <fstream>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "domain/run/host.h"
#include "tests/run/sshd_fixture.h"

namespace parity::run {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string RandomBytes(size_t n) {
  std::mt19937_64 gen(42);
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = gen();
    for (size_t k = 0; k < 8 && i + k < n; ++k) s[i + k] = static_cast<char>(v >> (8 * k));
  }
  return s;
}

class TransferTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam()) {
      ASSERT_TRUE(sshd_.ok()) << sshd_.error();
      auto h = ConnectSsh(sshd_.Target());
      ASSERT_TRUE(h.ok()) << h.status().ToString();
      host_ = std::move(h).value();
    } else {
      host_ = MakeLocalHost();
    }
    dir_ = sshd_.dir() / "transfer";
    fs::create_directories(dir_);
  }
  testing::SshdFixture sshd_;
  std::unique_ptr<Host> host_;
  fs::path dir_;
};

TEST_P(TransferTest, FileLargerThanTheInMemoryCapArrivesIntact) {
  const std::string bytes = RandomBytes((20u << 20) + 12345);  // 20 MiB and a bit: beyond Exec's 16 MiB cap
  const fs::path remote = dir_ / "big dump.json";
  std::ofstream(remote, std::ios::binary) << bytes;
  const fs::path local = dir_ / "copy.json";
  auto n = DownloadFile(*host_, remote.string(), local);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, bytes.size());
  EXPECT_TRUE(Slurp(local) == bytes) << "the downloaded bytes differ";
  EXPECT_FALSE(fs::exists(local.string() + ".part"));
}

TEST_P(TransferTest, MissingFileNamesThePathAndTheExitStatus) {
  const fs::path local = dir_ / "never.json";
  auto n = DownloadFile(*host_, (dir_ / "no such dir" / "dump.json").string(), local);
  ASSERT_FALSE(n.ok());
  std::string text = n.status().ToString();
  EXPECT_THAT(text, HasSubstr("no such dir/dump.json"));
  EXPECT_THAT(text, HasSubstr("exit code 1"));
  EXPECT_THAT(text, HasSubstr("No such file or directory"));
  EXPECT_THAT(text, HasSubstr(host_->Describe()));
  EXPECT_FALSE(fs::exists(local));
  EXPECT_FALSE(fs::exists(local.string() + ".part"));
}

TEST_P(TransferTest, ByteLimitStopsTheTransferAndLeavesNoPartialFile) {
  const std::string bytes = RandomBytes(3u << 20);
  const fs::path remote = dir_ / "three.bin";
  std::ofstream(remote, std::ios::binary) << bytes;
  const fs::path local = dir_ / "limited.bin";
  TransferOptions o;
  o.max_bytes = 1u << 20;
  auto n = DownloadFile(*host_, remote.string(), local, o);
  ASSERT_FALSE(n.ok());
  EXPECT_THAT(n.status().ToString(), HasSubstr("exceeds the limit of 1048576 bytes"));
  EXPECT_FALSE(fs::exists(local));
  EXPECT_FALSE(fs::exists(local.string() + ".part"));
  // At the limit exactly, it passes.
  o.max_bytes = bytes.size();
  auto exact = DownloadFile(*host_, remote.string(), local, o);
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  EXPECT_EQ(*exact, bytes.size());
}

TEST_P(TransferTest, UploadWritesBytesToAPathWithSpacesAndQuotes) {
  const fs::path remote = dir_ / "it's a \"probe\" $HOME; `x`.py";
  std::string bytes = RandomBytes(100000) + "\n'\"$(touch /tmp/never)\n";
  ASSERT_TRUE(UploadFile(*host_, bytes, remote.string()).ok());
  EXPECT_TRUE(Slurp(remote) == bytes);
  // Truncated on a second upload, and an empty upload makes an empty file.
  ASSERT_TRUE(UploadFile(*host_, "short", remote.string()).ok());
  EXPECT_EQ(Slurp(remote), "short");
  ASSERT_TRUE(UploadFile(*host_, "", remote.string()).ok());
  EXPECT_EQ(Slurp(remote), "");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
  EXPECT_THAT(names, ::testing::ElementsAre(remote.filename().string()));
  // A folder that does not exist is an error naming the path.
  Status missing = UploadFile(*host_, "x", (dir_ / "absent" / "f.py").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.ToString(), HasSubstr("absent/f.py"));
}

TEST_P(TransferTest, ExecToFileKeepsStderrAndTheExitCode) {
  const fs::path local = dir_ / "out.txt";
  ExecOptions o;
  auto r = host_->ExecToFile({"sh", "-c", "printf 'a\\nb\\n'; echo warn >&2; exit 3"}, {local, 1024}, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->err, "warn\n");
  EXPECT_EQ(r->out, "");
  EXPECT_EQ(Slurp(local), "a\nb\n");
}

INSTANTIATE_TEST_SUITE_P(Hosts, TransferTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "ssh" : "local"; });

TEST(TransferLossTest, KilledConnectionIsAnErrorNamingTheHost) {
  testing::SshdFixture sshd;
  ASSERT_TRUE(sshd.ok()) << sshd.error();
  auto host = ConnectSsh(sshd.Target());
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  sshd.KillConnections();
  auto n = DownloadFile(**host, "/etc/hostname", sshd.dir() / "h");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().kind(), ErrorKind::kUnavailable);
  EXPECT_THAT(n.status().ToString(), HasSubstr((*host)->Describe()));
}

}  // namespace
}  // namespace parity::run
