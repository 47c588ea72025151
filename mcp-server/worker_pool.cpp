#include "mcp-server/worker_pool.h"

namespace parity::mcp {

WorkerPool::WorkerPool(size_t threads, size_t max_queued) : max_queued_(max_queued) {
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Run(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

bool WorkerPool::TrySubmit(std::function<void()> task) {
  if (threads_.empty()) {
    task();
    return true;
  }
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    size_t idle_workers = threads_.size() - busy_;
    if (queue_.size() >= idle_workers + max_queued_) return false;
    queue_.push_back(std::move(task));
  }
  wake_.notify_one();
  return true;
}

void WorkerPool::WaitIdle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && busy_ == 0; });
}

bool WorkerPool::WaitIdleFor(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return idle_.wait_for(lock, timeout, [this] { return queue_.empty() && busy_ == 0; });
}

void WorkerPool::Run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      task = std::move(queue_.front());
      queue_.pop_front();
      ++busy_;
    }
    task();
    {
      std::lock_guard lock(mutex_);
      --busy_;
      if (queue_.empty() && busy_ == 0) idle_.notify_all();
    }
  }
}

}  // namespace parity::mcp
