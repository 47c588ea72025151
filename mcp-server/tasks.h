// The 2025-11-25 tasks utility: a tools/call with params.task runs in the background and
// answers at once with a task; tasks/get polls it, tasks/result waits for its result,
// tasks/list and tasks/cancel manage them. Tasks live in this process (their ttl bounds how
// long a finished one is kept). Questions a task's tool asks come back as the confirmation
// fallback in its result, since no request stays open to carry them.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <variant>
#include <vector>

#include "mcp-server/invoke.h"
#include "mcp-server/registry.h"

namespace parity::mcp {

class TaskStore {
 public:
  using Outcome = std::variant<json, RpcError>;
  TaskStore() = default;
  ~TaskStore();  // cancels what runs and joins

  Outcome Start(std::shared_ptr<const Tool> tool, json arguments, InvokeInputs inputs, CallSetup setup,
                const StateSigner& signer, const json& task_params);
  Outcome Get(const json& params);
  Outcome Result(const json& params, const CancellationToken& cancel);
  Outcome List(const json& params);
  Outcome Cancel(const json& params);
  // The transport is ending: running tasks are cancelled; Running counts their threads.
  void CancelAll();
  size_t Running();

 private:
  struct Task {
    std::string id;
    std::string status = "working";
    std::string status_message;
    std::string created_at, updated_at;
    int64_t ttl_ms = 3600000;
    std::chrono::steady_clock::time_point expires;
    CancellationSource cancel;
    Invocation invocation;
  };
  json TaskJson(const Task& t) const;
  std::shared_ptr<Task> Find(const json& params, RpcError& error);
  void Expire();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::shared_ptr<Task>> tasks_;
  struct Runner {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Runner> runners_;  // finished ones are joined on the next Start
};

}  // namespace parity::mcp
