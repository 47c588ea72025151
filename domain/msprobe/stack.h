// msprobe's stack.json (both forms: old {entry: [frame...]}, new {"0": [[entries...],
// [frames...]], ...}) and construct.json (entry -> parent module), and the frames inside:
// "File /path/x.py, line 64, in forward, \n return F.gelu(x)". The first frame in user code
// is the first one outside torch, torch_npu, msprobe, site-/dist-packages and the Python
// runtime.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "support/status.h"

namespace parity::msprobe {

struct Frame {
  std::string file;
  int line = 0;
  std::string function;
  std::string code;
};

// Parses one frame string; nullopt when it is not in msprobe's frame format.
std::optional<Frame> ParseFrame(std::string_view text);

// Whether a frame belongs to the user's code rather than a framework or the runtime. With
// `user_code` (path fragments such as "/PanGu/", PrecisionComparer's parse_code_dir), a
// frame is user code exactly when its path holds one of them.
bool IsUserFrame(const Frame& frame, const std::vector<std::string>& user_code = {});

class StackIndex {
 public:
  // Frames recorded for an entry (raw strings, innermost first as msprobe writes them);
  // null when the entry has none.
  const std::vector<std::string>* Find(std::string_view entry) const;
  size_t size() const { return by_entry_.size(); }
  bool new_form() const { return new_form_; }

 private:
  friend Result<StackIndex> ParseStackJson(std::string_view text, const std::filesystem::path& origin);
  std::vector<std::vector<std::string>> stacks_;
  std::unordered_map<std::string, size_t> by_entry_;
  bool new_form_ = false;
};

Result<StackIndex> ReadStackJson(const std::filesystem::path& path);
Result<StackIndex> ParseStackJson(std::string_view text, const std::filesystem::path& origin);

// construct.json: entry name -> parent module entry ("" or null at the top).
Result<std::unordered_map<std::string, std::string>> ReadConstructJson(const std::filesystem::path& path);


}  // namespace parity::msprobe
