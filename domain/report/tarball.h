// The member list of a .tar.gz (the infra_files.tar.gz audit_workspace writes), read with
// zlib; nothing is extracted.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "support/status.h"

namespace parity::report {

// Regular files in the archive, in archive order, with any leading "./" removed.
Result<std::vector<std::string>> ListTarGz(const std::filesystem::path& path);

}  // namespace parity::report
