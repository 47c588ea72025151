// The 2026-07-28 tasks extension (io.modelcontextprotocol/tasks, SEP-2663), as the
// conformance suite 0.2.0 checks it. A client opts in per request
// (_meta clientCapabilities.extensions["io.modelcontextprotocol/tasks"]); the server
// decides when a call becomes a task: a tool that supports tasks runs on a thread of its
// own and the request waits until the handler either returns (the answer is its own
// result: it was quick, or it asked for input first, answered inline through MRTR) or
// calls ToolContext::RunInBackground, at which point the task is registered and the
// request answered with a flat CreateTaskResult. Then:
//   tasks/get     the DetailedTask: status, statusMessage (the handler's progress), and
//                 the inlined result (completed; a tool error is completed + isError),
//                 error (failed: a protocol error, or the handler threw) or inputRequests
//                 (input_required: the handler asked the user after going background)
//   tasks/update  inputResponses for input_required keys; answered keys leave
//                 inputRequests, and once none is left the handler runs again with every
//                 answer (parity's handlers are written to be re-run up to their questions)
//   tasks/cancel  fires the task's cancellation (a training gets SIGTERM); the task is
//                 cancelled at once and its result never delivered
// Both acks are empty results. Unknown task ids get -32602; a request that did not declare
// the extension gets -32021. tasks/result and tasks/list are not part of it (-32601). Tasks
// live in this process; a finished one is kept for its ttlMs.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <variant>
#include <vector>

#include "mcp-server/invoke.h"
#include "mcp-server/registry.h"

namespace parity::mcp {

inline constexpr const char* kTasksExtension = "io.modelcontextprotocol/tasks";

class TaskExtension {
 public:
  using Outcome = std::variant<json, RpcError>;
  TaskExtension() = default;
  ~TaskExtension();  // cancels what runs (as a shutdown) and joins

  // Whether the request's client capabilities declare the extension.
  static bool Declared(const json& client_capabilities);
  // -32021 naming the extension, for `what` (a method, or a tool that requires tasks).
  static RpcError Missing(const std::string& what);

  // Runs a task-capable tool for a client that declared the extension. The answer is the
  // tool's own Invocation when it ended before RunInBackground, else a CreateTaskResult.
  // `request_cancel` (the request's own token) cancels the call until it became a task.
  std::variant<Invocation, json> Call(std::shared_ptr<const Tool> tool, json arguments, InvokeInputs inputs,
                                      CallSetup setup, const StateSigner& signer,
                                      const CancellationToken& request_cancel);
  Outcome Get(const json& params);
  Outcome Update(const json& params);
  Outcome Cancel(const json& params);

  // The transport is ending: every task is cancelled; Running counts handler threads.
  void CancelAll();
  size_t Running();

 private:
  struct Task;
  void Launch(const std::shared_ptr<Task>& task, InvokeInputs inputs, CallSetup setup);
  void Register(const std::shared_ptr<Task>& task);
  std::shared_ptr<Task> Find(const json& params, RpcError& error);
  void ExpireLocked();

  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Task>> tasks_;  // registered (detached) tasks
  struct Runner {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Runner> runners_;  // finished ones are joined on the next Launch
  const StateSigner* signer_ = nullptr;
};

}  // namespace parity::mcp
