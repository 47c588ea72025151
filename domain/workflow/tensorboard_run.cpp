#include "domain/workflow/tensorboard_run.h"

namespace parity::workflow {

namespace fs = std::filesystem;

std::vector<std::string> TensorBoardFlags(const fs::path& dir) {
  return {"--metrics.enable_tensorboard", "--metrics.save_tb_folder=" + dir.string()};
}

bool TakesTorchtitanFlags(const std::vector<std::string>& argv) {
  for (const auto& a : argv) {
    for (const char* prefix : {"--training.", "--model.", "--job.", "--metrics.", "--parallelism."}) {
      if (a.rfind(prefix, 0) == 0) return true;
    }
  }
  return false;
}

Result<fs::path> NewestEventFile(const fs::path& dir) {
  std::error_code ec;
  fs::path newest;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().filename().string().find("tfevents") != std::string::npos &&
        it->path() > newest) {
      newest = it->path();
    }
  }
  if (newest.empty()) {
    return NotFound("the run wrote no TensorBoard event file under " + dir.string())
        .WithHint("the launcher must honour --metrics.enable_tensorboard and --metrics.save_tb_folder");
  }
  return newest;
}

}  // namespace parity::workflow
