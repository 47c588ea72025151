// Connections before cpp-httplib reads a request from them. cpp-httplib 0.11 gives a
// connection a thread of its pool for as long as it is open, header reading included, so
// a few dozen clients that send their headers slowly (or never) hold every thread and
// block every request. AdmittingServer keeps such connections off the threads: a
// connection waits in one epoll set until a whole request header has arrived (peeked,
// left in the kernel), with a deadline for it (from accept, or for a kept-alive
// connection from the end of its previous response) and a cap on how many may wait (the
// one waiting longest is dropped for a newcomer); then one request is served on a worker
// thread, whose reads of the body have a deadline of their own, and the connection goes
// back to waiting. Authentication (the bearer token) is checked on the worker, before
// any body is read, by the transport's pre-routing guard.
//
// It plugs into cpp-httplib through its two customisation points: the task queue (the
// accept loop hands each socket to it) and the virtual process_and_close_socket.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

namespace parity::mcp {

struct AdmissionLimits {
  size_t workers = 64;
  size_t max_waiting = 256;      // connections without a complete header, at a time
  size_t max_idle = 256;         // kept-alive connections between requests, at a time
  int header_timeout_s = 10;     // a new connection's whole request header
  // Between two requests on one connection: clients are told keep_alive_s (the Keep-Alive
  // header) and stop reusing a connection before that; the server closes it only after
  // idle_timeout_s, so a client never reuses a connection the server is closing (a slow
  // client's late reuse would otherwise fail with "other side closed").
  int keep_alive_s = 5;
  int idle_timeout_s = 60;
  int body_timeout_s = 60;       // a request's whole body, from its header's arrival
  size_t max_header_bytes = 64u << 10;
};

class AdmittingServer : public httplib::Server {
 public:
  explicit AdmittingServer(AdmissionLimits limits);
  ~AdmittingServer() override;
  AdmittingServer(const AdmittingServer&) = delete;
  AdmittingServer& operator=(const AdmittingServer&) = delete;

  // For tests and diagnostics: connections waiting for a header now.
  size_t waiting() const;

 private:
  struct Waiting {
    std::chrono::steady_clock::time_point since, deadline;
    bool idle = false;  // a kept-alive connection between requests (not a new one)
  };
  class Queue;

  // Called by cpp-httplib's accept loop (through Queue, on the accept thread).
  bool process_and_close_socket(int sock) override;

  void Admit(int fd, bool idle);
  void Poll();                   // the epoll thread
  void Work();                   // a worker thread
  void Serve(int fd, size_t header_bytes);
  void Drop(int fd);             // closes a waiting connection (locked by the caller)
  void Shutdown();               // end of the accept loop: no more connections

  AdmissionLimits limits_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Shutdown wakes the epoll thread
  mutable std::mutex mutex_;
  std::condition_variable work_ready_;
  std::map<int, Waiting> waiting_;
  std::deque<std::pair<int, size_t>> ready_;  // fd, header bytes
  bool stopping_ = false;
  std::thread poller_;
  std::vector<std::thread> workers_;
};

}  // namespace parity::mcp
