// A mapping of a regular file that survives the file shrinking under it.
//
// Reading a log or a dump through mmap saves the kernel's copy of every byte (what read()
// costs), but a file truncated while mapped (copytruncate rotation, a writer starting over) makes every
// access past its new end raise SIGBUS. A GuardedMapping registers its address range with a
// process-wide SIGBUS handler (installed once, chaining to any previous handler for faults
// outside registered ranges) that maps a zero page over the faulting page and records the
// fault: the reader then sees zeros, and shrank() tells it to report the truncation instead
// of returning a short result. At most 64 mappings are guarded at once; Map() fails (and
// the caller reads with read()) beyond that.
#pragma once

#include <cstddef>
#include <memory>

#include "support/status.h"

namespace parity {

class GuardedMapping {
 public:
  enum class Access {
    kReadOnly,         // shared, read-only
    kPrivateWritable,  // private copy-on-write: writes stay in this process (parsers that
                       // write terminators into their input)
  };
  // Maps the first `size` bytes (> 0) of the open regular file `fd`.
  static Result<std::unique_ptr<GuardedMapping>> Map(int fd, size_t size, Access access = Access::kReadOnly);
  ~GuardedMapping();
  GuardedMapping(const GuardedMapping&) = delete;
  GuardedMapping& operator=(const GuardedMapping&) = delete;

  const char* data() const { return data_; }
  char* writable_data() const { return access_ == Access::kPrivateWritable ? data_ : nullptr; }
  size_t size() const { return size_; }
  // Whether a page past the file's end was touched since Map (it read as zeros).
  bool shrank() const;
  // Drops the page-table entries of [0, upto): a consumed part stops counting in RSS.
  void Release(size_t upto);

 private:
  GuardedMapping(char* data, size_t size, int slot, Access access)
      : data_(data), size_(size), slot_(slot), access_(access) {}
  char* data_;
  size_t size_;
  int slot_;
  Access access_;
  size_t released_ = 0;
};

}  // namespace parity
