#include "support/safe_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

namespace parity {

namespace fs = std::filesystem;

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) ::close(fd_);
}

namespace {

std::string ErrnoText(int e) { return std::strerror(e); }

Status SymlinkRefused(const fs::path& shown, const fs::path& root) {
  return FailedPrecondition(shown.string() + " is a symlink; parity does not write or read through a symlink inside " +
                            root.string())
      .WithHint("remove the link (a cloned repository or an earlier run may have left it) or use another folder");
}

bool IsSymlinkAt(int dir, const std::string& name) {
  struct stat st;
  return ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

// The components of a plain relative path; InvalidArgument for an absolute one, "..", or none.
Result<std::vector<std::string>> Components(const fs::path& relative, bool allow_empty = false) {
  if (relative.is_absolute() || relative.has_root_name() || relative.has_root_directory()) {
    return InvalidArgument(relative.string() + ": expected a path relative to the folder, got an absolute one");
  }
  std::vector<std::string> parts;
  for (const fs::path& part : relative) {
    std::string s = part.string();
    if (s.empty() || s == ".") continue;
    if (s == "..") return InvalidArgument(relative.string() + ": \"..\" is not allowed in the path");
    parts.push_back(std::move(s));
  }
  if (parts.empty() && !allow_empty) return InvalidArgument("\"" + relative.string() + "\" names no file");
  return parts;
}

Result<UniqueFd> OpenRoot(const fs::path& root, bool create) {
  if (create) {
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec) return Unavailable("cannot create " + root.string() + ": " + ec.message());
  }
  int fd = ::open(root.c_str(), O_DIRECTORY | O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    if (e == ENOENT) return NotFound(root.string() + ": no such folder");
    return Unavailable("cannot open " + root.string() + ": " + ErrnoText(e));
  }
  return UniqueFd(fd);
}

// Opens the folder parts[0..count) below `dir` without following a symlink, making missing
// ones when `create`.
Result<UniqueFd> WalkDirs(UniqueFd dir, const std::vector<std::string>& parts, size_t count, bool create,
                          const fs::path& root) {
  fs::path shown = root;
  for (size_t i = 0; i < count; ++i) {
    const char* name = parts[i].c_str();
    shown /= parts[i];
    int fd = ::openat(dir.get(), name, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
      if (::mkdirat(dir.get(), name, 0755) != 0 && errno != EEXIST) {
        return Unavailable("cannot create " + shown.string() + ": " + ErrnoText(errno));
      }
      fd = ::openat(dir.get(), name, O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    }
    if (fd < 0) {
      int e = errno;
      if ((e == ELOOP || e == ENOTDIR) && IsSymlinkAt(dir.get(), parts[i])) return SymlinkRefused(shown, root);
      if (e == ENOTDIR) return FailedPrecondition(shown.string() + " is not a folder");
      if (e == ENOENT) return NotFound(shown.string() + ": no such folder");
      return Unavailable("cannot open " + shown.string() + ": " + ErrnoText(e));
    }
    dir = UniqueFd(fd);
  }
  return dir;
}

// The folder that holds root/relative, and the file's own name.
struct Parent {
  UniqueFd dir;
  std::string name;
  fs::path shown;
};

Result<Parent> OpenParent(const fs::path& root, const fs::path& relative, bool create) {
  PARITY_ASSIGN_OR_RETURN(std::vector<std::string> parts, Components(relative));
  PARITY_ASSIGN_OR_RETURN(UniqueFd top, OpenRoot(root, create));
  PARITY_ASSIGN_OR_RETURN(UniqueFd dir, WalkDirs(std::move(top), parts, parts.size() - 1, create, root));
  fs::path shown = root;
  for (const auto& p : parts) shown /= p;
  return Parent{std::move(dir), parts.back(), shown};
}

Status WriteAll(int fd, std::string_view bytes, const fs::path& shown) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Unavailable("cannot write " + shown.string() + ": " + ErrnoText(errno));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

std::string RandomSuffix() {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^ (static_cast<uint64_t>(::getpid()) << 32));
  char buf[20];
  std::snprintf(buf, sizeof buf, "%012llx", static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
  return buf;
}

Result<std::string> ReadFd(int fd, uint64_t offset, uint64_t length, const fs::path& shown) {
  std::string text(length, '\0');
  uint64_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, text.data() + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Unavailable("cannot read " + shown.string() + ": " + ErrnoText(errno));
    }
    if (n == 0) break;
    done += static_cast<uint64_t>(n);
  }
  text.resize(done);
  return text;
}

// Opens a regular file for reading, reached without symlinks; returns it with its size.
Result<std::pair<UniqueFd, uint64_t>> OpenRegular(const fs::path& root, const fs::path& relative) {
  PARITY_ASSIGN_OR_RETURN(Parent parent, OpenParent(root, relative, /*create=*/false));
  // O_NONBLOCK: a FIFO planted under the name must not block the open.
  int fd = ::openat(parent.dir.get(), parent.name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int e = errno;
    if (e == ELOOP && IsSymlinkAt(parent.dir.get(), parent.name)) return SymlinkRefused(parent.shown, root);
    if (e == ENOENT) return NotFound(parent.shown.string() + ": no such file");
    return Unavailable("cannot open " + parent.shown.string() + ": " + ErrnoText(e));
  }
  UniqueFd file(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return Unavailable("cannot stat " + parent.shown.string() + ": " + ErrnoText(errno));
  if (!S_ISREG(st.st_mode)) return FailedPrecondition(parent.shown.string() + " is not a regular file");
  return std::make_pair(std::move(file), static_cast<uint64_t>(st.st_size));
}

Status RemoveAt(int dir, const std::string& name, const fs::path& shown, int depth) {
  if (depth > 256) return FailedPrecondition(shown.string() + ": folders nested too deep to remove");
  struct stat st;
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::Ok();
    return Unavailable("cannot stat " + shown.string() + ": " + ErrnoText(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    int fd = ::openat(dir, name.c_str(), O_DIRECTORY | O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return Unavailable("cannot open " + shown.string() + ": " + ErrnoText(errno));
    DIR* d = ::fdopendir(fd);
    if (!d) {
      ::close(fd);
      return Unavailable("cannot list " + shown.string() + ": " + ErrnoText(errno));
    }
    std::vector<std::string> children;
    while (dirent* e = ::readdir(d)) {
      std::string child = e->d_name;
      if (child != "." && child != "..") children.push_back(child);
    }
    Status status;
    for (const auto& child : children) {
      status = RemoveAt(::dirfd(d), child, shown / child, depth + 1);
      if (!status.ok()) break;
    }
    ::closedir(d);
    PARITY_RETURN_IF_ERROR(status);
    if (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
      return Unavailable("cannot remove " + shown.string() + ": " + ErrnoText(errno));
    }
    return Status::Ok();
  }
  if (::unlinkat(dir, name.c_str(), 0) != 0 && errno != ENOENT) {
    return Unavailable("cannot remove " + shown.string() + ": " + ErrnoText(errno));
  }
  return Status::Ok();
}

}  // namespace

bool IsPlainRelative(const fs::path& relative) { return Components(relative).ok(); }

fs::path RelativeUnder(const fs::path& root, const fs::path& path) {
  fs::path r = fs::absolute(root).lexically_normal(), p = fs::absolute(path).lexically_normal();
  fs::path rel = p.lexically_relative(r);
  if (rel.empty() || *rel.begin() == "..") return {};
  return rel;
}

Result<AtomicFileWriter> AtomicFileWriter::Create(const fs::path& root, const fs::path& relative,
                                                  const WriteOptions& options) {
  PARITY_ASSIGN_OR_RETURN(Parent parent, OpenParent(root, relative, options.create_parents));
  std::optional<mode_t> kept;  // an existing file's bits, to keep
  struct stat st;
  if (::fstatat(parent.dir.get(), parent.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(st.st_mode)) return SymlinkRefused(parent.shown, root);
    if (S_ISDIR(st.st_mode)) return FailedPrecondition(parent.shown.string() + " is a folder, not a file");
    if (options.keep_mode) kept = st.st_mode & 07777;
  }
  AtomicFileWriter w;
  w.name_ = parent.name;
  w.shown_ = parent.shown.string();
  for (int attempt = 0; attempt < 16 && !w.file_.valid(); ++attempt) {
    w.tmp_name_ = parent.name + ".tmp." + RandomSuffix();
    int fd = ::openat(parent.dir.get(), w.tmp_name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      kept ? 0600 : options.mode);  // a new file's bits go through the umask
    if (fd < 0 && errno != EEXIST) {
      return Unavailable("cannot create " + (parent.shown.parent_path() / w.tmp_name_).string() + ": " +
                         ErrnoText(errno));
    }
    if (fd >= 0) w.file_ = UniqueFd(fd);
  }
  if (!w.file_.valid()) return Unavailable("cannot create a temporary file beside " + w.shown_);
  if (kept && ::fchmod(w.file_.get(), *kept) != 0) {
    return Unavailable("cannot set the permissions of " + w.shown_ + ": " + ErrnoText(errno));
  }
  w.dir_ = std::move(parent.dir);
  return w;
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept
    : dir_(std::move(other.dir_)),
      file_(std::move(other.file_)),
      name_(std::move(other.name_)),
      tmp_name_(std::move(other.tmp_name_)),
      shown_(std::move(other.shown_)),
      buffer_(std::move(other.buffer_)),
      committed_(other.committed_) {
  other.committed_ = true;  // the moved-from writer owns no temporary file
}

AtomicFileWriter::~AtomicFileWriter() {
  if (!committed_ && dir_.valid()) ::unlinkat(dir_.get(), tmp_name_.c_str(), 0);
}

Status AtomicFileWriter::Flush() {
  Status s = WriteAll(file_.get(), buffer_, shown_);
  buffer_.clear();
  return s;
}

Status AtomicFileWriter::Write(std::string_view bytes) {
  if (bytes.size() >= (1u << 20)) {  // a large piece is written as it is, not copied first
    PARITY_RETURN_IF_ERROR(Flush());
    return WriteAll(file_.get(), bytes, shown_);
  }
  buffer_.append(bytes);
  if (buffer_.size() >= (1u << 20)) return Flush();
  return Status::Ok();
}

Status AtomicFileWriter::Commit() {
  PARITY_RETURN_IF_ERROR(Flush());
  if (::fsync(file_.get()) != 0) return Unavailable("cannot sync " + shown_ + ": " + ErrnoText(errno));
  file_ = UniqueFd();
  if (::renameat(dir_.get(), tmp_name_.c_str(), dir_.get(), name_.c_str()) != 0) {
    return Unavailable("cannot replace " + shown_ + ": " + ErrnoText(errno));
  }
  committed_ = true;
  return Status::Ok();
}

Status WriteFileUnder(const fs::path& root, const fs::path& relative, std::string_view bytes,
                      const WriteOptions& options) {
  PARITY_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(root, relative, options));
  PARITY_RETURN_IF_ERROR(writer.Write(bytes));
  return writer.Commit();
}

Status CopyFileUnder(const fs::path& from, const fs::path& root, const fs::path& relative, const WriteOptions& options,
                     bool replace) {
  UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (in.get() < 0) return Unavailable("cannot open " + from.string() + " to copy it: " + ErrnoText(errno));
  struct stat st;
  if (::fstat(in.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return FailedPrecondition(from.string() + " is not a regular file; parity copies only files");
  }
  std::error_code ec;
  if (!replace && fs::symlink_status(root / relative, ec).type() != fs::file_type::not_found) {
    return FailedPrecondition((root / relative).string() + " exists; parity does not overwrite it");
  }
  PARITY_ASSIGN_OR_RETURN(AtomicFileWriter writer, AtomicFileWriter::Create(root, relative, options));
  std::vector<char> block(1u << 20);
  while (true) {
    const ssize_t n = ::read(in.get(), block.data(), block.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Unavailable("reading " + from.string() + " failed: " + ErrnoText(errno));
    if (n == 0) break;
    PARITY_RETURN_IF_ERROR(writer.Write(std::string_view(block.data(), static_cast<size_t>(n))));
  }
  return writer.Commit();
}

Status WriteFileAtomic(const fs::path& path, std::string_view bytes, const WriteOptions& options) {
  fs::path parent = path.parent_path();
  return WriteFileUnder(parent.empty() ? fs::path(".") : parent, path.filename(), bytes, options);
}

Result<UniqueFd> OpenUnder(const fs::path& root, const fs::path& relative, int flags, mode_t mode) {
  PARITY_ASSIGN_OR_RETURN(Parent parent, OpenParent(root, relative, (flags & O_CREAT) != 0));
  int fd = ::openat(parent.dir.get(), parent.name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    int e = errno;
    if (e == ELOOP && IsSymlinkAt(parent.dir.get(), parent.name)) return SymlinkRefused(parent.shown, root);
    if (e == ENOENT) return NotFound(parent.shown.string() + ": no such file");
    if (e == EEXIST) return FailedPrecondition(parent.shown.string() + " already exists");
    return Unavailable("cannot open " + parent.shown.string() + ": " + ErrnoText(e));
  }
  return UniqueFd(fd);
}

Status AppendFileUnder(const fs::path& root, const fs::path& relative, std::string_view bytes, mode_t mode) {
  PARITY_ASSIGN_OR_RETURN(UniqueFd fd, OpenUnder(root, relative, O_WRONLY | O_APPEND | O_CREAT, mode));
  struct stat st;
  if (::fstat(fd.get(), &st) == 0 && !S_ISREG(st.st_mode)) {
    return FailedPrecondition((root / relative).string() + " is not a regular file");
  }
  return WriteAll(fd.get(), bytes, root / relative);
}

Status MakeDirsUnder(const fs::path& root, const fs::path& relative) {
  PARITY_ASSIGN_OR_RETURN(std::vector<std::string> parts, Components(relative, /*allow_empty=*/true));
  PARITY_ASSIGN_OR_RETURN(UniqueFd top, OpenRoot(root, /*create=*/true));
  return WalkDirs(std::move(top), parts, parts.size(), /*create=*/true, root).status();
}

Status MakeFreshDirUnder(const fs::path& root, const fs::path& relative) {
  PARITY_ASSIGN_OR_RETURN(Parent parent, OpenParent(root, relative, /*create=*/true));
  if (::mkdirat(parent.dir.get(), parent.name.c_str(), 0755) != 0) {
    int e = errno;
    if (e == EEXIST) return FailedPrecondition(parent.shown.string() + " already exists");
    return Unavailable("cannot create " + parent.shown.string() + ": " + ErrnoText(e));
  }
  return Status::Ok();
}

Result<std::string> ReadFileUnder(const fs::path& root, const fs::path& relative, uint64_t max_bytes) {
  PARITY_ASSIGN_OR_RETURN(auto opened, OpenRegular(root, relative));
  if (opened.second > max_bytes) {
    return InvalidArgument((root / relative).string() + ": " + std::to_string(opened.second) +
                           " bytes, more than the limit of " + std::to_string(max_bytes));
  }
  return ReadFd(opened.first.get(), 0, opened.second, root / relative);
}

Result<std::string> ReadFileTailUnder(const fs::path& root, const fs::path& relative, uint64_t max_bytes) {
  PARITY_ASSIGN_OR_RETURN(auto opened, OpenRegular(root, relative));
  uint64_t from = opened.second > max_bytes ? opened.second - max_bytes : 0;
  return ReadFd(opened.first.get(), from, opened.second - from, root / relative);
}

Status RenameUnder(const fs::path& root, const fs::path& from, const fs::path& to) {
  PARITY_ASSIGN_OR_RETURN(Parent a, OpenParent(root, from, /*create=*/false));
  PARITY_ASSIGN_OR_RETURN(Parent b, OpenParent(root, to, /*create=*/true));
  struct stat st;
  if (::fstatat(b.dir.get(), b.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    return FailedPrecondition(b.shown.string() + " already exists");
  }
  if (::renameat(a.dir.get(), a.name.c_str(), b.dir.get(), b.name.c_str()) != 0) {
    return Unavailable("cannot rename " + a.shown.string() + " to " + b.shown.string() + ": " + ErrnoText(errno));
  }
  return Status::Ok();
}

Status RemoveUnder(const fs::path& root, const fs::path& relative) {
  auto parent = OpenParent(root, relative, /*create=*/false);
  if (!parent.ok()) return parent.status().kind() == ErrorKind::kNotFound ? Status::Ok() : parent.status();
  return RemoveAt(parent->dir.get(), parent->name, parent->shown, 0);
}

}  // namespace parity
