#include "mcp-server/connection.h"

#include "mcp-server/jsonrpc.h"

namespace parity::mcp {

std::atomic<uint64_t> Connection::next_request_id_{1};

LegacyState Connection::legacy() const {
  std::lock_guard lock(mutex_);
  return legacy_;
}
void Connection::SetLegacy(LegacyState state) {
  std::lock_guard lock(mutex_);
  legacy_ = std::move(state);
}
void Connection::SetLogLevel(LogLevel level) {
  std::lock_guard lock(mutex_);
  legacy_.log_level = level;
}
void Connection::SetUnsolicitedSink(std::shared_ptr<Sink> sink) {
  std::lock_guard lock(mutex_);
  unsolicited_ = std::move(sink);
}
void Connection::ClearUnsolicitedSink(const Sink* sink) {
  std::lock_guard lock(mutex_);
  if (unsolicited_.get() == sink) unsolicited_.reset();
}
bool Connection::SendUnsolicited(const json& message) {
  std::shared_ptr<Sink> sink;
  {
    std::lock_guard lock(mutex_);
    sink = unsolicited_;
  }
  return sink && sink->Send(message);
}

std::set<std::string> Connection::subscriptions() const {
  std::lock_guard lock(mutex_);
  return subscriptions_;
}
void Connection::Subscribe(const std::string& uri) {
  std::lock_guard lock(mutex_);
  subscriptions_.insert(uri);
}
void Connection::Unsubscribe(const std::string& uri) {
  std::lock_guard lock(mutex_);
  subscriptions_.erase(uri);
}

void Connection::Begin(const std::string& id_key, CancellationSource source, std::function<void()> on_cancel) {
  std::lock_guard lock(mutex_);
  in_flight_[id_key] = InFlight{std::move(source), std::move(on_cancel)};
}

bool Connection::Cancel(const std::string& id_key) {
  std::function<void()> on_cancel;
  {
    std::lock_guard lock(mutex_);
    auto it = in_flight_.find(id_key);
    if (it == in_flight_.end()) return false;
    it->second.source.Cancel();
    on_cancel = std::move(it->second.on_cancel);
    it->second.on_cancel = nullptr;
  }
  if (on_cancel) on_cancel();
  return true;
}

void Connection::CancelAll() {
  std::vector<std::string> keys;
  {
    std::lock_guard lock(mutex_);
    for (auto& [k, v] : in_flight_) keys.push_back(k);
  }
  for (auto& k : keys) Cancel(k);
}

void Connection::Finish(const std::string& id_key) {
  std::lock_guard lock(mutex_);
  in_flight_.erase(id_key);
}

Result<json> Connection::Call(const std::string& method, json params, Sink& sink, const CancellationToken& cancel,
                              std::chrono::milliseconds timeout) {
  std::string id = "parity-" + std::to_string(next_request_id_++);
  json id_json = id;
  auto waiter = std::make_shared<Waiter>();
  {
    std::lock_guard lock(mutex_);
    waiters_[IdKey(id_json)] = waiter;
  }
  auto forget = [&] {
    std::lock_guard lock(mutex_);
    waiters_.erase(IdKey(id_json));
  };
  if (!sink.Send({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}})) {
    forget();
    return Unavailable("the client went away before " + method + " could be sent");
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock lock(mutex_);
  while (!waiter->done) {
    if (cancel.cancelled()) {
      waiters_.erase(IdKey(id_json));
      return Cancelled();
    }
    if (closed_) {
      waiters_.erase(IdKey(id_json));
      return Unavailable("the connection closed while waiting for the client's answer to " + method);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      waiters_.erase(IdKey(id_json));
      return DeadlineExceeded("the client did not answer " + method + " within " +
                              std::to_string(timeout.count() / 1000) + " s");
    }
    waiter->cv.wait_for(lock, std::chrono::milliseconds(50));
  }
  waiters_.erase(IdKey(id_json));
  if (!waiter->error.is_null()) {
    std::string message = waiter->error.is_object() ? waiter->error.value("message", "error") : waiter->error.dump();
    return Unavailable("the client answered " + method + " with an error: " + message)
        .WithEvidence("client_error", waiter->error.dump());
  }
  return waiter->result;
}

bool Connection::Resolve(const json& id, const json& result, const json& error) {
  std::lock_guard lock(mutex_);
  auto it = waiters_.find(IdKey(id));
  if (it == waiters_.end()) return false;
  it->second->result = result;
  it->second->error = error;
  it->second->done = true;
  it->second->cv.notify_all();
  return true;
}

bool Connection::HasRequests() const {
  std::lock_guard lock(mutex_);
  return !in_flight_.empty() || !waiters_.empty();
}

bool Connection::Idle() const {
  std::lock_guard lock(mutex_);
  return in_flight_.empty() && waiters_.empty() && !unsolicited_;
}

void Connection::Close() {
  closed_ = true;
  std::lock_guard lock(mutex_);
  for (auto& [k, w] : waiters_) w->cv.notify_all();
}

}  // namespace parity::mcp
