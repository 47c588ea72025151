#include "domain/msprobe/stack.h"
#include "support/json_document.h"
#include "support/file_read.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace parity::msprobe {

using json = nlohmann::json;

namespace {
constexpr uint64_t kMaxStackJsonBytes = uint64_t{4} << 30;
}

std::optional<Frame> ParseFrame(std::string_view text) {
  // f"File {path}, line {str(line)}, in {func}, \n {code[0].strip()}"
  constexpr std::string_view kFile = "File ";
  if (text.substr(0, kFile.size()) != kFile) return std::nullopt;
  size_t line_at = text.find(", line ");
  if (line_at == std::string_view::npos) return std::nullopt;
  size_t in_at = text.find(", in ", line_at);
  if (in_at == std::string_view::npos) return std::nullopt;
  Frame frame;
  frame.file = std::string(text.substr(kFile.size(), line_at - kFile.size()));
  std::string_view number = text.substr(line_at + 7, in_at - line_at - 7);
  try {
    frame.line = std::stoi(std::string(number));
  } catch (...) {
    return std::nullopt;
  }
  std::string_view rest = text.substr(in_at + 5);
  size_t code_at = rest.find(", \n");
  if (code_at == std::string_view::npos) {
    frame.function = std::string(rest);
  } else {
    frame.function = std::string(rest.substr(0, code_at));
    std::string_view code = rest.substr(code_at + 3);
    while (!code.empty() && (code.front() == ' ' || code.front() == '\t')) code.remove_prefix(1);
    frame.code = std::string(code);
  }
  return frame;
}

bool IsUserFrame(const Frame& frame, const std::vector<std::string>& user_code) {
  const std::string& f = frame.file;
  if (f.empty() || f.front() == '<') return false;  // <frozen ...>, <string>
  if (!user_code.empty()) {
    return std::any_of(user_code.begin(), user_code.end(),
                       [&](const std::string& marker) { return f.find(marker) != std::string::npos; });
  }
  static constexpr std::string_view kFramework[] = {
      "/site-packages/", "/dist-packages/", "/torch/", "/torch_npu/", "/msprobe/", "/mindspeed/",
  };
  for (std::string_view marker : kFramework) {
    if (f.find(marker) != std::string::npos) return false;
  }
  // The interpreter's own library (/usr/lib/python3.11/threading.py); installed packages
  // under it were caught above.
  if (f.find("/lib/python") != std::string::npos) return false;
  return true;
}

const std::vector<std::string>* StackIndex::Find(std::string_view entry) const {
  auto it = by_entry_.find(std::string(entry));
  return it == by_entry_.end() ? nullptr : &stacks_[it->second];
}

Result<StackIndex> ParseStackJson(std::string_view text, const std::filesystem::path& origin) {
  PARITY_ASSIGN_OR_RETURN(json doc, ParseJsonDocument(text, origin.string()));
  if (!doc.is_object()) {
    return InvalidArgument(origin.string() + ": not a JSON object (expected msprobe's stack.json)");
  }
  StackIndex index;
  auto to_frames = [&](const json& list, const std::string& where) -> Result<std::vector<std::string>> {
    if (!list.is_array()) return InvalidArgument(origin.string() + ": " + where + ": expected a list of frames");
    std::vector<std::string> frames;
    for (const json& frame : list) {
      if (!frame.is_string()) return InvalidArgument(origin.string() + ": " + where + ": frame is not a string");
      frames.push_back(frame.get<std::string>());
    }
    return frames;
  };
  // msprobe's rule: the new form iff key "0" exists and is truthy.
  auto zero = doc.find("0");
  index.new_form_ = zero != doc.end() && !zero->is_null() && !(zero->is_array() && zero->empty());
  if (index.new_form_) {
    for (auto& [key, value] : doc.items()) {
      if (!value.is_array() || value.size() != 2 || !value[0].is_array()) continue;  // msprobe skips these too
      PARITY_ASSIGN_OR_RETURN(auto frames, to_frames(value[1], "[\"" + key + "\"][1]"));
      index.stacks_.push_back(std::move(frames));
      for (const json& name : value[0]) {
        if (name.is_string()) index.by_entry_[name.get<std::string>()] = index.stacks_.size() - 1;
      }
    }
  } else {
    for (auto& [key, value] : doc.items()) {
      PARITY_ASSIGN_OR_RETURN(auto frames, to_frames(value, "[\"" + key + "\"]"));
      index.stacks_.push_back(std::move(frames));
      index.by_entry_[key] = index.stacks_.size() - 1;
    }
  }
  return index;
}

Result<StackIndex> ReadStackJson(const std::filesystem::path& path) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadFileLimited(path, kMaxStackJsonBytes));
  return ParseStackJson(text, path);
}

Result<std::unordered_map<std::string, std::string>> ReadConstructJson(const std::filesystem::path& path) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadFileLimited(path, kMaxStackJsonBytes));
  PARITY_ASSIGN_OR_RETURN(json doc, ParseJsonDocument(text, path.string()));
  if (!doc.is_object()) {
    return InvalidArgument(path.string() + ": not a JSON object (expected msprobe's construct.json)");
  }
  std::unordered_map<std::string, std::string> parents;
  for (auto& [key, value] : doc.items()) {
    parents[key] = value.is_string() ? value.get<std::string>() : std::string();
  }
  return parents;
}

}  // namespace parity::msprobe
