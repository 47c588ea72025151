// parity install: registers `parity serve` with an assistant and installs the skills where
// the assistant looks for them. Only the entry named --name (default "parity") is ever
// written; every other server entry and every other key of the config file is kept as it
// was. A config file that is not valid JSON is refused and left untouched. Running it again
// changes nothing; --print shows what would be written without writing.
#include "cli/install_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/embedded_files.h"
#include "support/status.h"
#include "support/file_read.h"

namespace parity::skills {
std::span<const EmbeddedFile> Files();
}

namespace parity::cli {
namespace {

namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

constexpr const char* kInstallUsage =
    "usage: parity install (--claude-code [--scope user|project|local] [--project DIR] |\n"
    "                       --claude-desktop [--config FILE]) [--name NAME] [--print]\n"
    "  --claude-code      register in Claude Code (user: ~/.claude.json, project: DIR/.mcp.json,\n"
    "                     local: ~/.claude.json for DIR only) and install the skills\n"
    "                     (~/.claude/skills or DIR/.claude/skills)\n"
    "  --claude-desktop   register in Claude Desktop's claude_desktop_config.json\n"
    "  --print            show what would be written; write nothing\n";

struct InstallOptions {
  bool claude_code = false;
  bool claude_desktop = false;
  std::string scope = "user";
  fs::path project;
  std::optional<fs::path> desktop_config;
  std::string name = "parity";
  bool print_only = false;
};

// One file parity would write, with its new content.
struct PlannedWrite {
  fs::path path;
  std::string content;
  std::string summary;  // "add server parity", "update skill file ..."
  bool changed = true;
  // The mode of a file created new (an existing file keeps its own). The user's own
  // config files are 0600, as Claude Code creates ~/.claude.json: they hold per-project
  // history and servers' env values; a .mcp.json meant for the repository and skill files
  // are 0644.
  mode_t new_mode = 0644;
};

fs::path HomeDir() {
  const char* home = std::getenv("HOME");
  return home && *home ? fs::path(home) : fs::current_path();
}

// ~/.claude.json keeps per-project history and grows; parity refuses to load anything larger.
constexpr uint64_t kMaxSettingsBytes = uint64_t{64} << 20;

// The config file as JSON, or an empty object when it does not exist yet.
Result<ojson> LoadConfig(const fs::path& path) {
  if (!fs::exists(path)) return ojson::object();
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadFileLimited(path, kMaxSettingsBytes));
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return ojson::object();
  ojson config = ojson::parse(text, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object()) {
    return FailedPrecondition(path.string() + " is not a JSON object; parity left it untouched")
        .WithHint("fix or move the file, then run `parity install` again");
  }
  return config;
}

Result<fs::path> SelfPath() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return Unavailable("cannot find parity's own path (/proc/self/exe): " + ec.message());
  return self;
}

// Puts `entry` at config[path...][name]; returns the summary, or nothing when unchanged.
Result<PlannedWrite> PlanServerEntry(const fs::path& file, const std::vector<std::string>& path,
                                     const std::string& name, const ojson& entry) {
  PARITY_ASSIGN_OR_RETURN(ojson config, LoadConfig(file));
  ojson* node = &config;
  std::string where = file.string();
  for (const auto& key : path) {
    if (!node->contains(key)) (*node)[key] = ojson::object();
    node = &(*node)[key];
    where += " › " + key;
    if (!node->is_object()) {
      return FailedPrecondition(where + " is not a JSON object; parity left the file untouched")
          .WithHint("fix the file by hand, then run `parity install` again");
    }
  }
  PlannedWrite w;
  w.path = file;
  if (node->contains(name) && (*node)[name] == entry) {
    w.changed = false;
    w.summary = "server \"" + name + "\" already registered in " + where;
  } else {
    w.summary = std::string(node->contains(name) ? "update" : "add") + " server \"" + name + "\" in " + where;
    (*node)[name] = entry;
  }
  w.content = config.dump(2) + "\n";
  return w;
}

std::vector<PlannedWrite> PlanSkills(const fs::path& skills_dir) {
  std::vector<PlannedWrite> writes;
  for (const EmbeddedFile& f : parity::skills::Files()) {
    PlannedWrite w;
    w.path = skills_dir / std::string(f.path);
    w.content = std::string(f.content);
    auto existing = ReadFileLimited(w.path, kMaxSettingsBytes);
    w.changed = !existing.ok() || *existing != w.content;
    w.summary = std::string(w.changed ? (existing.ok() ? "update" : "add") : "unchanged") + " skill file " +
                w.path.string();
    writes.push_back(std::move(w));
  }
  return writes;
}

Status WriteAtomically(const PlannedWrite& w) {
  std::error_code ec;
  fs::create_directories(w.path.parent_path(), ec);
  if (ec) return Unavailable("cannot create " + w.path.parent_path().string() + ": " + ec.message());
  fs::path tmp = w.path;
  tmp += ".parity-tmp";
  // The temporary file is created with the final mode (never readable by others for a
  // moment) and never through a link someone left at its name.
  struct stat st;
  mode_t mode = stat(w.path.c_str(), &st) == 0 ? (st.st_mode & 07777) : w.new_mode;
  ::unlink(tmp.c_str());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) return Unavailable("cannot create " + tmp.string() + ": " + std::strerror(errno));
  const char* data = w.content.data();
  size_t left = w.content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return Unavailable("cannot write " + tmp.string() + ": " + std::strerror(e));
    }
    data += n;
    left -= static_cast<size_t>(n);
  }
  ::fchmod(fd, mode);  // the umask may have narrowed it; never widens what was there
  if (::close(fd) != 0) return Unavailable("cannot write " + tmp.string() + ": " + std::strerror(errno));
  fs::rename(tmp, w.path, ec);
  if (ec) return Unavailable("cannot replace " + w.path.string() + ": " + ec.message());
  return Status::Ok();
}

Result<InstallOptions> ParseOptions(const std::vector<std::string>& args) {
  InstallOptions o;
  o.project = fs::current_path();
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> Result<std::string> {
      if (i + 1 >= args.size()) return InvalidArgument(std::string(flag) + " needs a value");
      return args[++i];
    };
    if (a == "--claude-code") o.claude_code = true;
    else if (a == "--claude-desktop") o.claude_desktop = true;
    else if (a == "--print") o.print_only = true;
    else if (a == "--scope") { PARITY_ASSIGN_OR_RETURN(o.scope, value("--scope")); }
    else if (a == "--project") { PARITY_ASSIGN_OR_RETURN(std::string p, value("--project")); o.project = fs::absolute(p); }
    else if (a == "--config") { PARITY_ASSIGN_OR_RETURN(std::string p, value("--config")); o.desktop_config = fs::absolute(p); }
    else if (a == "--name") { PARITY_ASSIGN_OR_RETURN(o.name, value("--name")); }
    else return InvalidArgument("unknown option \"" + a + "\"");
  }
  if (!o.claude_code && !o.claude_desktop) return InvalidArgument("say where to install: --claude-code or --claude-desktop");
  if (o.scope != "user" && o.scope != "project" && o.scope != "local") {
    return InvalidArgument("--scope must be user, project or local, not \"" + o.scope + "\"");
  }
  if (o.name.empty()) return InvalidArgument("--name must not be empty");
  return o;
}

fs::path DesktopConfigPath() {
#ifdef __APPLE__
  return HomeDir() / "Library/Application Support/Claude/claude_desktop_config.json";
#else
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  fs::path base = xdg && *xdg ? fs::path(xdg) : HomeDir() / ".config";
  return base / "Claude/claude_desktop_config.json";
#endif
}

Result<std::vector<PlannedWrite>> Plan(const InstallOptions& o) {
  PARITY_ASSIGN_OR_RETURN(fs::path self, SelfPath());
  std::vector<PlannedWrite> writes;
  if (o.claude_code) {
    ojson entry = {{"type", "stdio"}, {"command", self.string()}, {"args", {"serve"}}, {"env", ojson::object()}};
    fs::path skills_dir;
    if (o.scope == "project") {
      PARITY_ASSIGN_OR_RETURN(auto w, PlanServerEntry(o.project / ".mcp.json", {"mcpServers"}, o.name, entry));
      writes.push_back(std::move(w));
      skills_dir = o.project / ".claude/skills";
    } else if (o.scope == "local") {
      PARITY_ASSIGN_OR_RETURN(auto w, PlanServerEntry(HomeDir() / ".claude.json",
                                                      {"projects", o.project.string(), "mcpServers"}, o.name, entry));
      w.new_mode = 0600;
      writes.push_back(std::move(w));
      skills_dir = o.project / ".claude/skills";
    } else {
      PARITY_ASSIGN_OR_RETURN(auto w, PlanServerEntry(HomeDir() / ".claude.json", {"mcpServers"}, o.name, entry));
      w.new_mode = 0600;
      writes.push_back(std::move(w));
      skills_dir = HomeDir() / ".claude/skills";
    }
    for (auto& w : PlanSkills(skills_dir)) writes.push_back(std::move(w));
  }
  if (o.claude_desktop) {
    ojson entry = {{"command", self.string()}, {"args", {"serve"}}};
    fs::path file = o.desktop_config.value_or(DesktopConfigPath());
    PARITY_ASSIGN_OR_RETURN(auto w, PlanServerEntry(file, {"mcpServers"}, o.name, entry));
    w.new_mode = 0600;
    writes.push_back(std::move(w));
  }
  return writes;
}

}  // namespace

int InstallCommand(const std::vector<std::string>& args) {
  auto options = ParseOptions(args);
  if (!options.ok()) {
    std::fprintf(stderr, "parity install: %s\n%s", options.status().message().c_str(), kInstallUsage);
    return 2;
  }
  auto plan = Plan(*options);
  if (!plan.ok()) {
    std::fprintf(stderr, "parity install: %s\n", plan.status().ToString().c_str());
    return 1;
  }
  for (const PlannedWrite& w : *plan) {
    if (options->print_only) {
      std::printf("%s%s\n", w.changed ? "would " : "", w.summary.c_str());
      if (w.changed && w.path.extension() == ".json") std::printf("--- %s\n%s", w.path.c_str(), w.content.c_str());
      continue;
    }
    if (w.changed) {
      Status s = WriteAtomically(w);
      if (!s.ok()) {
        std::fprintf(stderr, "parity install: %s\n", s.ToString().c_str());
        return 1;
      }
    }
    std::printf("%s\n", w.summary.c_str());
  }
  if (options->claude_desktop && !options->print_only) {
    std::printf("Claude Desktop reads no skill folders; the workflows are served as MCP prompts "
                "(premerge-accuracy-check, precision-comparer). Restart Claude Desktop to load parity.\n");
  }
  return 0;
}

}  // namespace parity::cli
