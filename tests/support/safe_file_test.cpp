// support/safe_file on real folders: every way a planted symlink could redirect a write or a
// read (the target, a folder on the way, the temporary file's name, a backup read back), a
// ".." or absolute relative path, a FIFO; and what must keep working: a root that is itself
// a symlink (the user's own), permissions kept or set, appends, removal of a tree holding a
// link to a folder outside it.
#include "support/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/common/temp_dir.h"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing_support::TempDir;
using testing_support::WriteFile;

std::string Slurp(const fs::path& p) {
  auto r = ReadFileUnder(p.parent_path(), p.filename(), 1 << 20);
  return r.ok() ? *r : "<" + r.status().message() + ">";
}

mode_t ModeOf(const fs::path& p) {
  struct stat st;
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 07777;
}

struct Folders {
  TempDir dir;
  fs::path root = dir.path() / "report", outside = dir.path() / "outside";
  Folders() {
    fs::create_directories(root);
    fs::create_directories(outside);
    WriteFile(outside / "victim", "precious\n");
  }
};

TEST(SafeFile, WritesReadsAndSetsTheMode) {
  Folders f;
  WriteOptions records;
  records.mode = kRecordMode;
  ASSERT_TRUE(WriteFileUnder(f.root, "jobs/a/job.json", "{}\n", records).ok());
  EXPECT_EQ(Slurp(f.root / "jobs/a/job.json"), "{}\n");
  EXPECT_EQ(ModeOf(f.root / "jobs/a/job.json") & 077, 0u);
  ASSERT_TRUE(WriteFileUnder(f.root, "jobs/a/job.json", "{\"b\":1}\n", records).ok());
  EXPECT_EQ(Slurp(f.root / "jobs/a/job.json"), "{\"b\":1}\n");
  // No temporary file is left beside the target.
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(f.root / "jobs/a")) files += e.path().filename() != "job.json";
  EXPECT_EQ(files, 0u);
  // A rewritten source keeps its bits.
  WriteFile(f.root / "run.sh", "#!/bin/sh\n");
  fs::permissions(f.root / "run.sh", fs::perms(0755));
  WriteOptions keep;
  keep.keep_mode = true;
  ASSERT_TRUE(WriteFileUnder(f.root, "run.sh", "#!/bin/sh\necho\n", keep).ok());
  EXPECT_EQ(ModeOf(f.root / "run.sh"), 0755u);
}

TEST(SafeFile, ASymlinkedTargetIsRefusedAndItsTargetUntouched) {
  Folders f;
  fs::create_symlink(f.outside / "victim", f.root / "manifest.json");
  auto s = WriteFileUnder(f.root, "manifest.json", "owned\n");
  EXPECT_EQ(s.kind(), ErrorKind::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("is a symlink"), std::string::npos) << s.message();
  EXPECT_EQ(Slurp(f.outside / "victim"), "precious\n");
  EXPECT_FALSE(AppendFileUnder(f.root, "manifest.json", "owned\n").ok());
  EXPECT_FALSE(ReadFileUnder(f.root, "manifest.json", 100).ok());
  EXPECT_FALSE(OpenUnder(f.root, "manifest.json", O_RDWR | O_CREAT).ok());
  EXPECT_EQ(Slurp(f.outside / "victim"), "precious\n");
}

TEST(SafeFile, CopiesAreWrittenLikeEveryOtherWrite) {
  Folders f;
  std::string big(3u << 20, 'x');  // more than one block of the stream
  big[12345] = 'y';
  WriteFile(f.outside / "log", big);
  ASSERT_TRUE(CopyFileUnder(f.outside / "log", f.root, "hunt/logs/baseline.log").ok());
  auto copied = ReadFileUnder(f.root, "hunt/logs/baseline.log", 4u << 20);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_EQ(*copied, big);
  // A symlink planted where the copy goes (a cloned report directory): refused, the link's
  // target untouched.
  fs::create_symlink(f.outside / "victim", f.root / "copy.log");
  auto through = CopyFileUnder(f.outside / "log", f.root, "copy.log");
  EXPECT_EQ(through.kind(), ErrorKind::kFailedPrecondition) << through.ToString();
  EXPECT_EQ(Slurp(f.outside / "victim"), "precious\n");
  // Never over an existing file when asked, and only regular files are copied.
  auto again = CopyFileUnder(f.outside / "log", f.root, "hunt/logs/baseline.log", WriteOptions{}, /*replace=*/false);
  EXPECT_NE(again.message().find("exists"), std::string::npos) << again.ToString();
  auto folder = CopyFileUnder(f.outside, f.root, "folder.log");
  EXPECT_NE(folder.message().find("not a regular file"), std::string::npos) << folder.ToString();
  EXPECT_FALSE(fs::exists(f.root / "folder.log"));
}

TEST(SafeFile, ASymlinkedFolderOnTheWayIsRefused) {
  Folders f;
  fs::create_directory_symlink(f.outside, f.root / "report");
  auto s = WriteFileUnder(f.root, "report/report.html", "<html>");
  EXPECT_EQ(s.kind(), ErrorKind::kFailedPrecondition) << s.ToString();
  EXPECT_FALSE(MakeDirsUnder(f.root, "report/charts").ok());
  EXPECT_FALSE(ReadFileUnder(f.root, "report/victim", 100).ok());
  EXPECT_FALSE(fs::exists(f.outside / "report.html"));
  EXPECT_FALSE(fs::exists(f.outside / "charts"));
}

TEST(SafeFile, APlantedTemporaryNameIsNotFollowed) {
  Folders f;
  fs::create_symlink(f.outside / "victim", f.root / "manifest.json.tmp");
  ASSERT_TRUE(WriteFileUnder(f.root, "manifest.json", "{}\n").ok());
  EXPECT_EQ(Slurp(f.outside / "victim"), "precious\n");
  EXPECT_EQ(Slurp(f.root / "manifest.json"), "{}\n");
}

TEST(SafeFile, DotDotAndAbsolutePathsAreRefused) {
  Folders f;
  for (const char* rel : {"../outside/victim", "a/../../outside/victim", "/tmp/x", "", "."}) {
    SCOPED_TRACE(rel);
    EXPECT_EQ(WriteFileUnder(f.root, rel, "owned\n").kind(), ErrorKind::kInvalidArgument);
    EXPECT_FALSE(ReadFileUnder(f.root, rel, 100).ok());
  }
  EXPECT_EQ(Slurp(f.outside / "victim"), "precious\n");
  EXPECT_FALSE(IsPlainRelative("../x"));
  EXPECT_TRUE(IsPlainRelative("a/./b"));
}

TEST(SafeFile, TheRootMayBeTheUsersOwnSymlink) {
  Folders f;
  fs::create_directory_symlink(f.root, f.dir.path() / "link-to-report");
  ASSERT_TRUE(WriteFileUnder(f.dir.path() / "link-to-report", "x/y.txt", "ok\n").ok());
  EXPECT_EQ(Slurp(f.root / "x/y.txt"), "ok\n");
}

TEST(SafeFile, AFifoIsRefusedWithoutBlocking) {
  Folders f;
  ASSERT_EQ(::mkfifo((f.root / "pipe").c_str(), 0600), 0);
  auto r = ReadFileUnder(f.root, "pipe", 100);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a regular file"), std::string::npos) << r.status().message();
}

TEST(SafeFile, AppendTailRenameAndFreshFolders) {
  Folders f;
  ASSERT_TRUE(AppendFileUnder(f.root, "a.log", "one\n").ok());
  ASSERT_TRUE(AppendFileUnder(f.root, "a.log", "two\n").ok());
  EXPECT_EQ(Slurp(f.root / "a.log"), "one\ntwo\n");
  EXPECT_EQ(*ReadFileTailUnder(f.root, "a.log", 4), "two\n");
  EXPECT_EQ(ReadFileUnder(f.root, "a.log", 3).status().kind(), ErrorKind::kInvalidArgument);
  ASSERT_TRUE(RenameUnder(f.root, "a.log", "b.log").ok());
  EXPECT_EQ(Slurp(f.root / "b.log"), "one\ntwo\n");
  WriteFile(f.root / "c.log", "c\n");
  EXPECT_EQ(RenameUnder(f.root, "b.log", "c.log").kind(), ErrorKind::kFailedPrecondition);
  ASSERT_TRUE(MakeFreshDirUnder(f.root, "jobs/j1").ok());
  EXPECT_EQ(MakeFreshDirUnder(f.root, "jobs/j1").kind(), ErrorKind::kFailedPrecondition);
  EXPECT_EQ(ReadFileUnder(f.root, "missing", 10).status().kind(), ErrorKind::kNotFound);
}

TEST(SafeFile, AWriterThatIsNotCommittedLeavesNothing) {
  Folders f;
  {
    auto w = AtomicFileWriter::Create(f.root, "table.csv");
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(w->Write("a,b\n").ok());
  }
  EXPECT_TRUE(fs::is_empty(f.root));
  auto w = AtomicFileWriter::Create(f.root, "table.csv");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(w->Write("a,b\n").ok());
  ASSERT_TRUE(w->Commit().ok());
  EXPECT_EQ(Slurp(f.root / "table.csv"), "a,b\n");
}

TEST(SafeFile, RemovingATreeDoesNotFollowALinkOutOfIt) {
  Folders f;
  WriteFile(f.root / ".parity_inject/orig/a.py", "x\n");
  fs::create_directory_symlink(f.outside, f.root / ".parity_inject/orig/escape");
  ASSERT_TRUE(RemoveUnder(f.root, ".parity_inject").ok());
  EXPECT_FALSE(fs::exists(f.root / ".parity_inject"));
  EXPECT_EQ(Slurp(f.outside / "victim"), "precious\n");
  EXPECT_TRUE(RemoveUnder(f.root, "never-there").ok());
  // The folder itself a link: the link goes, the folder it names stays.
  fs::create_directory_symlink(f.outside, f.root / "state");
  ASSERT_TRUE(RemoveUnder(f.root, "state").ok());
  EXPECT_EQ(Slurp(f.outside / "victim"), "precious\n");
}

}  // namespace
}  // namespace parity
