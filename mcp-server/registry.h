// The registries of what the server offers: tools, prompts, resources and resource
// templates. Each keeps registration order (that is the listing order, deterministic as
// 2026-07-28 asks), looks entries up by name, may change while serving (list_changed), and
// is safe to use from any thread. Handlers are plain functions; they know no protocol.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "mcp-server/tool.h"

namespace parity::mcp {

// ---- prompts ----

// Completes one argument value; `context` holds the other arguments already given.
using Completer = std::function<std::vector<std::string>(std::string_view value, const json& context)>;

struct PromptArgument {
  std::string name;
  std::string description;
  bool required = false;
  Completer complete;  // optional
};

struct PromptSpec {
  std::string name;
  std::string title;
  std::string description;
  std::vector<PromptArgument> arguments;
};

// Returns a GetPromptResult body: {"description"?, "messages": [...]}. Arguments are
// checked against the spec (required ones present, all strings) before the call.
using PromptHandler = std::function<Result<json>(const json& arguments, ToolContext& context)>;

struct Prompt {
  PromptSpec spec;
  PromptHandler handler;
};

// ---- resources ----

struct ResourceSpec {
  std::string uri;
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
};

// Returns the ReadResourceResult "contents" array for `uri`. `variables` holds the
// template's variables when the resource came from a template (empty otherwise).
using ResourceReader = std::function<Result<json>(const std::string& uri,
                                                  const std::map<std::string, std::string>& variables,
                                                  ToolContext& context)>;

struct Resource {
  ResourceSpec spec;
  ResourceReader read;
};

struct ResourceTemplate {
  std::string uri_template;  // RFC 6570 level 1: "test://template/{id}/data"
  std::string name;
  std::string title;
  std::string description;
  std::string mime_type;
  ResourceReader read;
  std::map<std::string, Completer> complete;  // per template variable, optional
};

// Matches `uri` against a level-1 RFC 6570 template; the variables on success.
std::optional<std::map<std::string, std::string>> MatchUriTemplate(std::string_view uri_template,
                                                                   std::string_view uri);

// ---- a registry of named things ----

template <typename T>
class Registry {
 public:
  using Listener = std::function<void()>;

  // Adds or replaces (same name) an entry and tells the listeners.
  void Add(T item, std::string key) {
    {
      std::unique_lock lock(mutex_);
      auto it = index_.find(key);
      auto ptr = std::make_shared<const T>(std::move(item));
      if (it != index_.end()) {
        items_[it->second] = ptr;
      } else {
        index_[key] = items_.size();
        items_.push_back(ptr);
        keys_.push_back(key);
      }
    }
    Notify();
  }
  bool Remove(const std::string& key) {
    {
      std::unique_lock lock(mutex_);
      auto it = index_.find(key);
      if (it == index_.end()) return false;
      size_t at = it->second;
      items_.erase(items_.begin() + at);
      keys_.erase(keys_.begin() + at);
      index_.clear();
      for (size_t i = 0; i < keys_.size(); ++i) index_[keys_[i]] = i;
    }
    Notify();
    return true;
  }
  std::shared_ptr<const T> Find(const std::string& key) const {
    std::shared_lock lock(mutex_);
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : items_[it->second];
  }
  std::vector<std::shared_ptr<const T>> Snapshot() const {
    std::shared_lock lock(mutex_);
    return items_;
  }
  size_t size() const {
    std::shared_lock lock(mutex_);
    return items_.size();
  }
  // Called (outside the lock) after every change.
  void OnChange(Listener listener) {
    std::unique_lock lock(mutex_);
    listeners_.push_back(std::move(listener));
  }

 private:
  void Notify() {
    std::vector<Listener> listeners;
    {
      std::shared_lock lock(mutex_);
      listeners = listeners_;
    }
    for (auto& l : listeners) l();
  }

  mutable std::shared_mutex mutex_;
  std::vector<std::shared_ptr<const T>> items_;
  std::vector<std::string> keys_;
  std::map<std::string, size_t> index_;
  std::vector<Listener> listeners_;
};

class ToolRegistry : public Registry<Tool> {
 public:
  void Add(Tool tool) { std::string n = tool.spec.name; Registry::Add(std::move(tool), n); }
};
class PromptRegistry : public Registry<Prompt> {
 public:
  void Add(Prompt prompt) { std::string n = prompt.spec.name; Registry::Add(std::move(prompt), n); }
};
class ResourceRegistry : public Registry<Resource> {
 public:
  void Add(Resource r) { std::string u = r.spec.uri; Registry::Add(std::move(r), u); }
};
class TemplateRegistry : public Registry<ResourceTemplate> {
 public:
  void Add(ResourceTemplate t) { std::string u = t.uri_template; Registry::Add(std::move(t), u); }
};

// Everything one server offers.
struct Catalog {
  ToolRegistry tools;
  PromptRegistry prompts;
  ResourceRegistry resources;
  TemplateRegistry templates;
};

// ---- wire forms ----

json ToolToJson(const ToolSpec& spec);  // a Tool object of tools/list, its schemas portable

// The same JSON Schema spelled so that every major client accepts it (the Inspector's
// --strict portability rules; a client mapping schemas onto a one-`type` dialect such as
// Gemini's OpenAPI subset rejects the rest): a `type` array becomes `anyOf` branches of one
// type each, the keywords that constrain that type moved into its branch, the annotations
// (description, title, default) and enum/const left beside the anyOf. Same instances valid.
json PortableSchema(const json& schema);
json PromptToJson(const PromptSpec& spec);
json ResourceToJson(const ResourceSpec& spec);
json TemplateToJson(const ResourceTemplate& t);

// Checks a tool name against the spec's [A-Za-z0-9_.-]{1,128}.
bool IsValidToolName(std::string_view name);

}  // namespace parity::mcp
