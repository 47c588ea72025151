// Files in folders parity owns (the report directory, its job folders, parity's worktrees),
// written and read so that a symlink planted there (a cloned repository can ship one, a
// report directory can sit inside it) never redirects a write or a read elsewhere.
//
// The rule: `root` is a folder the user or the policy named; symlinks in it and above it are
// the user's own and are followed once, when root is opened. Below root every component is
// opened with O_NOFOLLOW relative to its parent's descriptor (openat), so a symlinked folder
// or file below root is refused with FailedPrecondition naming it, and there is no window
// between a check and the open. `relative` must be relative and hold no ".." (InvalidArgument).
// Whole-file writes go to a temporary file created O_EXCL beside the target (never an
// existing name, so a planted "<name>.tmp" symlink is not followed) and renamed over it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "support/status.h"

namespace parity {

// An owned file descriptor.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

struct WriteOptions {
  mode_t mode = 0644;          // permission bits of the file written (records: 0600)
  bool keep_mode = false;      // replacing an existing file keeps its bits instead (sources)
  bool create_parents = true;  // missing folders below root are made (0755)
};

inline constexpr mode_t kRecordMode = 0600;  // job records, the ledger, inject state

// Writes `bytes` to root/relative atomically (temp file, fsync, rename). A symlink or a
// folder at the target is refused.
Status WriteFileUnder(const std::filesystem::path& root, const std::filesystem::path& relative,
                      std::string_view bytes, const WriteOptions& options = {});
// The same with root = path's parent folder: only the file itself is checked (for callers
// whose folder is the user's choice, such as an --output path).
Status WriteFileAtomic(const std::filesystem::path& path, std::string_view bytes, const WriteOptions& options = {});

// A whole file written in pieces (a large CSV): Write() buffers and appends to a temporary
// file created as WriteFileUnder creates it, Commit() fsyncs it and renames it over the
// target. Destroyed without Commit(), the temporary file is removed.
class AtomicFileWriter {
 public:
  static Result<AtomicFileWriter> Create(const std::filesystem::path& root, const std::filesystem::path& relative,
                                         const WriteOptions& options = {});
  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&&) = delete;
  ~AtomicFileWriter();
  Status Write(std::string_view bytes);
  Status Commit();

 private:
  AtomicFileWriter() = default;
  Status Flush();
  UniqueFd dir_, file_;
  std::string name_, tmp_name_, shown_;  // shown_: root/relative, for messages
  std::string buffer_;
  bool committed_ = false;
};

// Copies the regular file `from` (read as it is: the caller has checked where it may be
// read) to root/relative the way WriteFileUnder writes (no symlink followed below root, the
// target replaced atomically), streamed. `replace` false: an existing target is an error.
Status CopyFileUnder(const std::filesystem::path& from, const std::filesystem::path& root,
                     const std::filesystem::path& relative, const WriteOptions& options = {}, bool replace = true);

// Appends to root/relative, creating it with `mode` (logs).
Status AppendFileUnder(const std::filesystem::path& root, const std::filesystem::path& relative,
                       std::string_view bytes, mode_t mode = 0644);

// Opens root/relative with `flags` (O_NOFOLLOW and O_CLOEXEC added) after walking its folders
// without following symlinks; with O_CREAT, missing parent folders are made. For lock files
// and files written incrementally.
Result<UniqueFd> OpenUnder(const std::filesystem::path& root, const std::filesystem::path& relative, int flags,
                           mode_t mode = 0644);

// Makes root/relative and its missing parents; refuses one that is (or passes through) a symlink.
Status MakeDirsUnder(const std::filesystem::path& root, const std::filesystem::path& relative);
// Like MakeDirsUnder, but the last folder must not exist yet (a fresh job folder).
Status MakeFreshDirUnder(const std::filesystem::path& root, const std::filesystem::path& relative);

// Reads root/relative (a regular file reached without symlinks), at most max_bytes:
// NotFound when missing, FailedPrecondition for a symlink or a non-regular file,
// InvalidArgument when larger than max_bytes.
Result<std::string> ReadFileUnder(const std::filesystem::path& root, const std::filesystem::path& relative,
                                  uint64_t max_bytes);
// The last max_bytes of root/relative (all of it when shorter), read the same way.
Result<std::string> ReadFileTailUnder(const std::filesystem::path& root, const std::filesystem::path& relative,
                                      uint64_t max_bytes);

// Renames root/from to root/to (both relative to root, folders reached without symlinks).
// `to` must not exist.
Status RenameUnder(const std::filesystem::path& root, const std::filesystem::path& from,
                   const std::filesystem::path& to);

// Removes root/relative: a file, a symlink (the link itself) or a folder with everything in
// it, never following a symlink inside. Missing is not an error.
Status RemoveUnder(const std::filesystem::path& root, const std::filesystem::path& relative);

// Whether `relative` is a plain relative path (no root, no "..", not empty): what the
// functions above accept.
bool IsPlainRelative(const std::filesystem::path& relative);

// `path` relative to `root` when it lies lexically inside it (both absolute and normalised
// first); an empty path otherwise.
std::filesystem::path RelativeUnder(const std::filesystem::path& root, const std::filesystem::path& path);

}  // namespace parity
