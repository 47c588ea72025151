// A stand-in OpenAI-compatible chat-completions server on an ephemeral loopback port
// (cpp-httplib), started by the constructor and always stopped by the destructor. It checks
// every request the way DeepSeek's API would need it (path, bearer key, model, temperature 0,
// JSON response format, system + user messages that show the target line) and answers with
// whatever the test scripted: a content string, an HTTP status and body, or a delay.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::inject {

class FakeChatServer {
 public:
  struct Reply {
    int status = 200;
    std::string body;                     // raw body; empty: a chat completion around `content`
    std::string content;                  // the assistant message
    std::chrono::milliseconds delay{0};   // before answering (a slow endpoint)
  };

  FakeChatServer(std::string key, std::string model, std::string must_mention)
      : key_(std::move(key)), model_(std::move(model)), must_mention_(std::move(must_mention)) {
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) { Handle(req, res); });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 500 && !server_.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ~FakeChatServer() {
    stopping_ = true;
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  void Respond(std::function<Reply(int request_number)> respond) {
    std::lock_guard lock(mu_);
    respond_ = std::move(respond);
  }
  int requests() const { return requests_; }
  bool received() const { return requests_ > 0; }
  std::vector<std::string> problems() const {
    std::lock_guard lock(mu_);
    return problems_;
  }

 private:
  void Check(bool ok, const std::string& problem) {
    if (!ok) problems_.push_back(problem);
  }

  void Handle(const httplib::Request& req, httplib::Response& res) {
    using json = nlohmann::json;
    int n = ++requests_;
    std::function<Reply(int)> respond;
    {
      std::lock_guard lock(mu_);
      Check(req.get_header_value("Authorization") == "Bearer " + key_, "Authorization is not the bearer key");
      Check(req.get_header_value("Content-Type") == "application/json", "Content-Type is not application/json");
      json body = json::parse(req.body, nullptr, false);
      Check(body.is_object(), "the body is not a JSON object");
      if (body.is_object()) {
        Check(body.value("model", "") == model_, "model is not " + model_);
        Check(body.contains("temperature") && body["temperature"] == 0, "temperature is not 0");
        Check(body.value("response_format", json::object()).value("type", "") == "json_object",
              "response_format is not json_object");
        const json& m = body.value("messages", json::array());
        Check(m.size() == 2 && m[0].value("role", "") == "system" && m[1].value("role", "") == "user",
              "messages are not [system, user]");
        Check(m.size() == 2 && m[1].value("content", "").find(must_mention_) != std::string::npos,
              "the user message does not show \"" + must_mention_ + "\"");
      }
      respond = respond_;
    }
    Reply reply = respond ? respond(n) : Reply{500, "no reply scripted", "", {}};
    for (auto waited = std::chrono::milliseconds(0); waited < reply.delay && !stopping_; waited += std::chrono::milliseconds(10)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    res.status = reply.status;
    std::string body = reply.body;
    if (body.empty()) {
      body = json{{"id", "chatcmpl-test"}, {"object", "chat.completion"}, {"model", model_},
                  {"choices", json::array({{{"index", 0}, {"finish_reason", "stop"},
                                            {"message", {{"role", "assistant"}, {"content", reply.content}}}}})}}
                 .dump();
    }
    res.set_content(body, "application/json");
  }

  std::string key_, model_, must_mention_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
  mutable std::mutex mu_;
  std::function<Reply(int)> respond_;
  std::vector<std::string> problems_;
};

}  // namespace parity::inject
