#include "mcp-server/batch_sink.h"

#include "mcp-server/jsonrpc.h"

namespace parity::mcp {

BatchSink::BatchSink(std::shared_ptr<Sink> out, std::vector<json> request_ids, json early)
    : out_(std::move(out)), replies_(early.is_array() ? std::move(early) : json::array()) {
  for (const auto& id : request_ids) pending_.insert(IdKey(id));
}

bool BatchSink::Send(const json& message) {
  bool reply = message.is_object() && !message.contains("method") && message.contains("id") &&
               (message.contains("result") || message.contains("error"));
  if (reply) {
    std::unique_lock lock(mutex_);
    auto it = pending_.find(IdKey(message["id"]));
    if (it != pending_.end()) {
      pending_.erase(it);
      replies_.push_back(message);
      SettleLocked(lock);
      return true;
    }
  }
  return out_->Send(message);  // not one of ours: a notification or a request to the client
}

void BatchSink::NoReply(const json& id) {
  std::unique_lock lock(mutex_);
  auto it = pending_.find(IdKey(id));
  if (it == pending_.end()) return;
  pending_.erase(it);
  SettleLocked(lock);
}

void BatchSink::Seal() {
  std::unique_lock lock(mutex_);
  sealed_ = true;
  SettleLocked(lock);
}

void BatchSink::SettleLocked(std::unique_lock<std::mutex>& lock) {
  if (!sealed_ || sent_ || !pending_.empty()) return;
  sent_ = true;
  json replies = std::move(replies_);
  lock.unlock();  // the downstream sink may block (a pipe) or wake another thread
  if (replies.empty()) {
    out_->NoReply(nullptr);  // only notifications, or every request cancelled: nothing to send
  } else {
    out_->Send(replies);
  }
}

}  // namespace parity::mcp
