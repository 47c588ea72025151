#include "mcp-server/tasks.h"

#include <ctime>

#include "mcp-server/server_internal.h"
#include "mcp-server/signed_state.h"
#include "mcp-server/task_extension.h"
#include "support/iso_time.h"

namespace parity::mcp {

namespace {

std::string RandomId() { return RandomHex(16); }

bool Terminal(const std::string& status) {
  return status == "completed" || status == "failed" || status == "cancelled";
}

}  // namespace

TaskStore::~TaskStore() {
  {
    std::lock_guard lock(mutex_);
    for (auto& [id, t] : tasks_) t->cancel.Cancel();
  }
  for (auto& r : runners_) r.thread.join();
}

json TaskStore::TaskJson(const Task& t) const {
  json j = {{"taskId", t.id}, {"status", t.status}, {"createdAt", t.created_at}, {"lastUpdatedAt", t.updated_at},
            {"ttl", t.ttl_ms}, {"pollInterval", 500}};
  if (!t.status_message.empty()) j["statusMessage"] = t.status_message;
  return j;
}

void TaskStore::Expire() {
  auto now = std::chrono::steady_clock::now();
  std::erase_if(tasks_, [&](const auto& kv) { return Terminal(kv.second->status) && kv.second->expires < now; });
}

TaskStore::Outcome TaskStore::Start(std::shared_ptr<const Tool> tool, json arguments, InvokeInputs inputs,
                                    CallSetup setup, const StateSigner& signer, const json& task_params) {
  auto task = std::make_shared<Task>();
  task->id = RandomId();
  task->created_at = task->updated_at = NowIsoUtc();
  if (task_params.is_object() && task_params.contains("ttl") && task_params["ttl"].is_number_integer()) {
    task->ttl_ms = std::clamp<int64_t>(task_params["ttl"].get<int64_t>(), 1000, 24 * 3600 * 1000);
  }
  task->expires = std::chrono::steady_clock::now() + std::chrono::milliseconds(task->ttl_ms);
  setup.cancel = task->cancel.token();
  setup.channel = nullptr;  // no request stays open for notifications
  setup.live_requests = false;
  json created;
  {
    std::lock_guard lock(mutex_);
    Expire();
    tasks_[task->id] = task;
    created = TaskJson(*task);
    std::erase_if(runners_, [](Runner& r) {
      if (!r.done->load()) return false;
      r.thread.join();
      return true;
    });
    auto done = std::make_shared<std::atomic<bool>>(false);
    runners_.push_back({std::thread([this, task, tool, arguments, inputs, setup, &signer, done] {
      Invocation inv = InvokeTool(*tool, arguments, inputs, setup, signer);
      std::lock_guard lock(mutex_);
      done->store(true);
      if (task->status == "cancelled") return;
      task->invocation = std::move(inv);
      task->status = task->invocation.error ? "failed" : "completed";
      task->updated_at = NowIsoUtc();
      task->expires = std::chrono::steady_clock::now() + std::chrono::milliseconds(task->ttl_ms);
      changed_.notify_all();
    }), done});
  }
  return json{{"task", created}};
}

std::shared_ptr<TaskStore::Task> TaskStore::Find(const json& params, RpcError& error) {
  if (!params.contains("taskId") || !params["taskId"].is_string()) {
    error = RpcError{rpc::kInvalidParams, "params.taskId: required string", nullptr};
    return nullptr;
  }
  auto it = tasks_.find(params["taskId"].get<std::string>());
  if (it == tasks_.end()) {
    error = RpcError{rpc::kInvalidParams, "unknown task: " + params["taskId"].get<std::string>(), nullptr};
    return nullptr;
  }
  return it->second;
}

TaskStore::Outcome TaskStore::Get(const json& params) {
  std::lock_guard lock(mutex_);
  RpcError error;
  auto task = Find(params, error);
  if (!task) return error;
  return TaskJson(*task);
}

TaskStore::Outcome TaskStore::Result(const json& params, const CancellationToken& cancel) {
  std::unique_lock lock(mutex_);
  RpcError error;
  auto task = Find(params, error);
  if (!task) return error;
  while (!Terminal(task->status)) {
    if (cancel.cancelled()) return RpcErrorFromStatus(Cancelled());
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
  if (task->status == "cancelled") {
    return RpcError{rpc::kInvalidParams, "task " + task->id + " was cancelled", {{"taskId", task->id}}};
  }
  if (task->invocation.error) return *task->invocation.error;
  json result = task->invocation.result;
  result["_meta"]["io.modelcontextprotocol/related-task"] = {{"taskId", task->id}};
  return result;
}

TaskStore::Outcome TaskStore::List(const json&) {
  std::lock_guard lock(mutex_);
  Expire();
  json list = json::array();
  for (const auto& [id, t] : tasks_) list.push_back(TaskJson(*t));
  return json{{"tasks", list}};
}

TaskStore::Outcome TaskStore::Cancel(const json& params) {
  std::lock_guard lock(mutex_);
  RpcError error;
  auto task = Find(params, error);
  if (!task) return error;
  if (Terminal(task->status)) {
    return RpcError{rpc::kInvalidParams, "task " + task->id + " is already " + task->status, nullptr};
  }
  task->cancel.Cancel();
  task->status = "cancelled";
  task->updated_at = NowIsoUtc();
  changed_.notify_all();
  return TaskJson(*task);
}

void TaskStore::CancelAll() {
  std::lock_guard lock(mutex_);
  for (auto& [id, t] : tasks_) {
    if (!Terminal(t->status)) t->cancel.Cancel();
  }
}

size_t TaskStore::Running() {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const auto& r : runners_) n += r.done->load() ? 0 : 1;
  return n;
}

// tasks/get and tasks/cancel exist in both eras, with the era's semantics; in 2026-07-28
// only for a request that declared the extension.
Server::Outcome Server::OnTasksGet(RequestCtx& ctx) {
  if (!ctx.modern) return tasks_->Get(ctx.params);
  if (!TaskExtension::Declared(ctx.client_capabilities)) return TaskExtension::Missing("tasks/get");
  return extension_->Get(ctx.params);
}
Server::Outcome Server::OnTasksResult(RequestCtx& ctx) { return tasks_->Result(ctx.params, ctx.cancel.token()); }
Server::Outcome Server::OnTasksList(RequestCtx& ctx) { return tasks_->List(ctx.params); }
Server::Outcome Server::OnTasksCancel(RequestCtx& ctx) {
  if (!ctx.modern) return tasks_->Cancel(ctx.params);
  if (!TaskExtension::Declared(ctx.client_capabilities)) return TaskExtension::Missing("tasks/cancel");
  return extension_->Cancel(ctx.params);
}
Server::Outcome Server::OnTasksUpdate(RequestCtx& ctx) {
  if (!TaskExtension::Declared(ctx.client_capabilities)) return TaskExtension::Missing("tasks/update");
  return extension_->Update(ctx.params);
}

}  // namespace parity::mcp
