// A bounded pool of worker threads. TrySubmit refuses work when every worker is busy and
// the queue is full, so the caller can answer "server busy, retry" instead of growing
// without limit. threads == 0 runs every task on the caller's thread (tests, fuzzing).
// The destructor finishes queued tasks and joins the workers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace parity::mcp {

class WorkerPool {
 public:
  WorkerPool(size_t threads, size_t max_queued);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  bool TrySubmit(std::function<void()> task);
  // Blocks until no task is queued or running.
  void WaitIdle();
  // The same, for at most `timeout`; returns whether the pool is idle.
  bool WaitIdleFor(std::chrono::milliseconds timeout);

 private:
  void Run();

  size_t max_queued_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> queue_;
  size_t busy_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace parity::mcp
