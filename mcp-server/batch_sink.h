// The sink of one JSON-RPC batch (2025-03-26): the replies to its requests are collected
// into one array (JSON-RPC 2.0 §6) and sent once every request has one (a cancelled
// request has none); everything else its handlers send meanwhile (progress, log messages,
// server->client requests such as elicitation/create) passes straight through, so a tool
// in a batch can still ask the client and be answered. Parse errors of the batch's
// elements are in the array too. Thread-safe.
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "mcp-server/connection.h"

namespace parity::mcp {

class BatchSink : public Sink {
 public:
  // `request_ids`: the ids of the batch's requests; `early`: replies known already.
  BatchSink(std::shared_ptr<Sink> out, std::vector<json> request_ids, json early);
  bool Send(const json& message) override;
  void NoReply(const json& id) override;
  // Every element has been dispatched: the array may go out once complete (until then a
  // batch whose handlers answer synchronously could not tell "all answered" from "not all
  // dispatched yet").
  void Seal();

 private:
  void SettleLocked(std::unique_lock<std::mutex>& lock);

  std::shared_ptr<Sink> out_;
  std::mutex mutex_;
  std::multiset<std::string> pending_;  // IdKey of requests without a reply yet
  json replies_;
  bool sealed_ = false, sent_ = false;
};

}  // namespace parity::mcp
