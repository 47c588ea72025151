#include "mcp-server/task_extension.h"

#include "mcp-server/server_internal.h"
#include "mcp-server/signed_state.h"
#include "support/iso_time.h"

namespace parity::mcp {

namespace {

constexpr int64_t kTtlMs = 24 * 3600 * 1000;  // a training's result stays a day
constexpr int64_t kPollIntervalMs = 500;

bool Terminal(const std::string& status) {
  return status == "completed" || status == "failed" || status == "cancelled";
}

json Ack() { return json::object(); }  // Reply adds resultType "complete"

}  // namespace

struct TaskExtension::Task final : TaskHooks {
  std::string id = RandomHex(16);
  std::shared_ptr<const Tool> tool;
  json arguments;
  StateBinding binding;
  CallSetup setup;  // as the first run had it (channel cleared for later runs)
  std::chrono::steady_clock::time_point created = std::chrono::steady_clock::now();
  std::string created_at = NowIsoUtc();
  CancellationSource cancel;
  TaskExtension* owner = nullptr;
  std::shared_ptr<Task> self;  // set while the first run may still register it

  mutable std::mutex mutex;
  std::condition_variable changed;
  bool detached_flag = false;   // RunInBackground was called (the task is registered)
  bool run_done = false;        // the current run of the handler returned
  Invocation first;             // the first run's outcome when it ended before detaching
  std::string status = "working", status_message, updated_at = created_at;
  json result, error, input_requests = json::object(), answers = json::object();

  void Detach(std::string_view message) override {
    {
      std::lock_guard lock(mutex);
      if (detached_flag) return;
      status_message = std::string(message);
    }
    owner->Register(self);  // durable before the request is answered
    std::lock_guard lock(mutex);
    detached_flag = true;
    changed.notify_all();
  }
  bool detached() const override {
    std::lock_guard lock(mutex);
    return detached_flag;
  }
  void Progress(double done, std::optional<double> total, std::string_view message) override {
    std::lock_guard lock(mutex);
    if (Terminal(status)) return;
    status_message = !message.empty() ? std::string(message)
                     : total          ? std::to_string(static_cast<int64_t>(done)) + "/" +
                                   std::to_string(static_cast<int64_t>(*total))
                                      : std::to_string(static_cast<int64_t>(done));
    updated_at = NowIsoUtc();
  }

  json Envelope() const {  // locked by the caller
    json j = {{"taskId", id}, {"status", status}, {"createdAt", created_at}, {"lastUpdatedAt", updated_at},
              {"ttlMs", kTtlMs}, {"pollIntervalMs", kPollIntervalMs}};
    if (!status_message.empty()) j["statusMessage"] = status_message;
    return j;
  }
};

TaskExtension::~TaskExtension() {
  CancelAll();
  std::vector<Runner> runners;
  {
    std::lock_guard lock(mutex_);
    runners.swap(runners_);
  }
  for (auto& r : runners) r.thread.join();
}

bool TaskExtension::Declared(const json& caps) {
  if (!caps.is_object() || !caps.contains("extensions") || !caps["extensions"].is_object()) return false;
  return caps["extensions"].contains(kTasksExtension);
}

RpcError TaskExtension::Missing(const std::string& what) {
  return RpcError{rpc::kMissingCapability,
                  what + " needs the " + std::string(kTasksExtension) + " extension, which the request did not declare",
                  {{"requiredCapabilities", {{"extensions", {{kTasksExtension, json::object()}}}}}}};
}

void TaskExtension::Register(const std::shared_ptr<Task>& task) {
  std::lock_guard lock(mutex_);
  ExpireLocked();
  tasks_[task->id] = task;
}

void TaskExtension::ExpireLocked() {
  auto now = std::chrono::steady_clock::now();
  std::erase_if(tasks_, [&](const auto& kv) {
    std::lock_guard lock(kv.second->mutex);
    return Terminal(kv.second->status) && now - kv.second->created > std::chrono::milliseconds(kTtlMs);
  });
}

// One run of the handler, on a thread of its own: a training may take hours, the worker
// pool's threads serve requests.
void TaskExtension::Launch(const std::shared_ptr<Task>& task, InvokeInputs inputs, CallSetup setup) {
  auto done = std::make_shared<std::atomic<bool>>(false);
  std::lock_guard lock(mutex_);
  std::erase_if(runners_, [](Runner& r) {
    if (!r.done->load()) return false;
    r.thread.join();
    return true;
  });
  const StateSigner* signer = signer_;
  runners_.push_back({std::thread([task, inputs = std::move(inputs), setup, signer, done] {
                        Invocation inv = InvokeTool(*task->tool, task->arguments, inputs, setup, *signer);
                        {
                          std::lock_guard lock(task->mutex);
                          task->run_done = true;
                          if (!task->detached_flag) {
                            task->first = std::move(inv);  // the request answers with it
                          } else if (task->status == "cancelled") {
                            task->status_message = "cancelled; the work has stopped";
                          } else {
                            task->updated_at = NowIsoUtc();
                            if (inv.error) {
                              task->status = "failed";
                              task->error = inv.error->ToJson();
                            } else if (inv.threw) {
                              task->status = "failed";
                              std::string text = inv.result["content"].empty()
                                                     ? "the tool failed"
                                                     : inv.result["content"][0].value("text", "the tool failed");
                              task->error = RpcError{rpc::kInternalError, text, nullptr}.ToJson();
                            } else if (inv.input_required) {
                              task->status = "input_required";
                              task->input_requests = inv.result.value("inputRequests", json::object());
                              task->answers = inv.answers.is_object() ? inv.answers : json::object();
                              task->status_message = "waiting for the client's answer";
                            } else {
                              task->status = "completed";
                              task->result = std::move(inv.result);
                              task->result["resultType"] = "complete";
                            }
                          }
                          task->self.reset();
                          task->changed.notify_all();
                        }
                        done->store(true);
                      }),
                      done});
}

std::variant<Invocation, json> TaskExtension::Call(std::shared_ptr<const Tool> tool, json arguments,
                                                   InvokeInputs inputs, CallSetup setup, const StateSigner& signer,
                                                   const CancellationToken& request_cancel) {
  {
    std::lock_guard lock(mutex_);
    signer_ = &signer;
  }
  auto task = std::make_shared<Task>();
  task->tool = std::move(tool);
  task->arguments = std::move(arguments);
  task->binding = inputs.binding;
  task->owner = this;
  task->self = task;
  setup.cancel = task->cancel.token();
  setup.task = task.get();
  task->setup = setup;
  task->setup.channel = nullptr;  // later runs have no request to talk to
  Launch(task, std::move(inputs), setup);
  std::unique_lock lock(task->mutex);
  while (!task->detached_flag && !task->run_done) {
    // Until it is a task, the call is the request's: the request's cancel is its cancel.
    if (request_cancel.cancelled()) task->cancel.Cancel();
    task->changed.wait_for(lock, std::chrono::milliseconds(20));
  }
  if (!task->detached_flag) return std::move(task->first);
  json created = task->Envelope();
  created["resultType"] = "task";
  return created;
}

std::shared_ptr<TaskExtension::Task> TaskExtension::Find(const json& params, RpcError& error) {
  if (!params.contains("taskId") || !params["taskId"].is_string()) {
    error = RpcError{rpc::kInvalidParams, "params.taskId: required string", nullptr};
    return nullptr;
  }
  std::lock_guard lock(mutex_);
  ExpireLocked();
  auto it = tasks_.find(params["taskId"].get<std::string>());
  if (it == tasks_.end()) {
    error = RpcError{rpc::kInvalidParams, "unknown task: " + params["taskId"].get<std::string>(),
                     {{"taskId", params["taskId"]}}};
    return nullptr;
  }
  return it->second;
}

TaskExtension::Outcome TaskExtension::Get(const json& params) {
  RpcError error;
  auto task = Find(params, error);
  if (!task) return error;
  std::lock_guard lock(task->mutex);
  json j = task->Envelope();
  if (task->status == "completed") j["result"] = task->result;
  if (task->status == "failed") j["error"] = task->error;
  if (task->status == "input_required") j["inputRequests"] = task->input_requests;
  return j;
}

TaskExtension::Outcome TaskExtension::Update(const json& params) {
  RpcError error;
  auto task = Find(params, error);
  if (!task) return error;
  if (!params.contains("inputResponses") || !params["inputResponses"].is_object()) {
    return RpcError{rpc::kInvalidParams, "params.inputResponses: required object", nullptr};
  }
  std::unique_lock lock(task->mutex);
  if (task->status != "input_required") return Ack();  // nothing is asked: nothing to take
  for (auto& [key, answer] : params["inputResponses"].items()) {
    if (!task->input_requests.contains(key)) continue;  // not asked (or answered already)
    task->answers[key] = answer;
    task->input_requests.erase(key);
  }
  if (!task->input_requests.empty()) return Ack();  // the rest is still pending
  task->status = "working";
  task->status_message = "resumed with the client's answers";
  task->updated_at = NowIsoUtc();
  task->run_done = false;
  task->self = task;
  // The answers go in as the MRTR responses they are: a preset (CallSetup::answers, an
  // answers file) may not answer for the user, a client's response to AskUser may.
  CallSetup setup = task->setup;
  InvokeInputs inputs;
  inputs.binding = task->binding;
  inputs.input_responses = task->answers;
  lock.unlock();
  Launch(task, std::move(inputs), std::move(setup));
  return Ack();
}

TaskExtension::Outcome TaskExtension::Cancel(const json& params) {
  RpcError error;
  auto task = Find(params, error);
  if (!task) return error;
  std::lock_guard lock(task->mutex);
  if (Terminal(task->status)) return Ack();  // idempotent
  task->cancel.Cancel();
  task->status = "cancelled";
  task->status_message = task->run_done ? "cancelled" : "cancelled; stopping the work";
  task->updated_at = NowIsoUtc();
  return Ack();
}

void TaskExtension::CancelAll() {
  std::lock_guard lock(mutex_);
  for (auto& [id, task] : tasks_) task->cancel.Cancel();
}

size_t TaskExtension::Running() {
  std::lock_guard lock(mutex_);
  size_t n = 0;
  for (const auto& r : runners_) n += r.done->load() ? 0 : 1;
  return n;
}

}  // namespace parity::mcp
