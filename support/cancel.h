// Cooperative cancellation. The protocol layer owns a CancellationSource per request and
// fires it on notifications/cancelled (or an HTTP disconnect in the 2026-07-28 era); tools
// and the code below them poll the token between steps and kill their subprocesses.
// Copies of a token share one flag; tokens are cheap to copy and safe to poll from any thread.
#pragma once

#include <atomic>
#include <memory>

namespace parity {

class CancellationToken {
 public:
  // A token that is never cancelled.
  CancellationToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  bool cancelled() const { return flag_->load(std::memory_order_relaxed); }

 private:
  friend class CancellationSource;
  explicit CancellationToken(std::shared_ptr<std::atomic<bool>> flag) : flag_(std::move(flag)) {}
  std::shared_ptr<std::atomic<bool>> flag_;
};

class CancellationSource {
 public:
  CancellationSource() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  void Cancel() { flag_->store(true, std::memory_order_relaxed); }
  bool cancelled() const { return flag_->load(std::memory_order_relaxed); }
  CancellationToken token() const { return CancellationToken(flag_); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

}  // namespace parity
