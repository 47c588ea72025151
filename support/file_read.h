// Reading a local file into memory, always with a limit (cpp-httplib's rule: nothing reads
// input without one). Errors name the path.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "support/status.h"

namespace parity {

// The whole file. Missing or not a regular file: NotFound; larger than max_bytes:
// InvalidArgument naming both sizes; an unreadable or short read: Unavailable.
Result<std::string> ReadFileLimited(const std::filesystem::path& path, uint64_t max_bytes);

// At most the first max_bytes of the file (all of it when it is shorter): for files only
// their head is read of. Cannot be opened: NotFound.
Result<std::string> ReadFilePrefix(const std::filesystem::path& path, uint64_t max_bytes);

}  // namespace parity
