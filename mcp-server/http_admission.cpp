#include "mcp-server/http_admission.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace parity::mcp {

namespace {

using Clock = std::chrono::steady_clock;

int MillisLeft(Clock::time_point deadline, int cap_s) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, static_cast<long long>(cap_s) * 1000));
}

bool WaitFd(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  for (;;) {
    int r = ::poll(&p, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    return r > 0 && (p.revents & events) != 0;
  }
}

// Where a request header ends in `data` (just past its empty line), or 0 while incomplete.
size_t HeaderEnd(std::string_view data) {
  size_t crlf = data.find("\r\n\r\n");
  size_t lf = data.find("\n\n");
  size_t end = std::min(crlf == std::string_view::npos ? std::string_view::npos : crlf + 4,
                        lf == std::string_view::npos ? std::string_view::npos : lf + 2);
  return end == std::string_view::npos ? 0 : end;
}

// How much body the request header announces; SIZE_MAX for a chunked one (its end is only
// known by reading it).
size_t AnnouncedBody(std::string_view head) {
  std::string lower(head);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower.find("\ntransfer-encoding:") != std::string::npos) return SIZE_MAX;
  size_t at = lower.find("\ncontent-length:");
  if (at == std::string::npos) return 0;
  return static_cast<size_t>(std::strtoull(lower.c_str() + at + 16, nullptr, 10));
}

void SendAndForget(int fd, const char* response) {
  (void)!::send(fd, response, std::strlen(response), MSG_DONTWAIT | MSG_NOSIGNAL);
}

std::string AddressText(const sockaddr_storage& addr, int& port) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
    port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof text);
    port = ntohs(a.sin6_port);
  }
  return text;
}

// One admitted request's connection as cpp-httplib reads and writes it. The header was
// complete in the kernel when the connection was admitted and is read in one go; the body
// is read as cpp-httplib asks for it (never past the request), under the body deadline.
class AdmittedStream final : public httplib::Stream {
 public:
  AdmittedStream(int fd, std::string head, Clock::time_point body_deadline, int read_timeout_s, int write_timeout_s)
      : fd_(fd), head_(std::move(head)), deadline_(body_deadline), read_timeout_s_(read_timeout_s),
        write_timeout_s_(write_timeout_s) {}

  bool is_readable() const override {
    return off_ < head_.size() || WaitFd(fd_, POLLIN, MillisLeft(deadline_, read_timeout_s_));
  }
  bool is_writable() const override { return WaitFd(fd_, POLLOUT, write_timeout_s_ * 1000) && Alive(); }

  ssize_t read(char* ptr, size_t size) override {
    if (off_ < head_.size()) {
      size_t n = std::min(size, head_.size() - off_);
      std::memcpy(ptr, head_.data() + off_, n);
      off_ += n;
      return static_cast<ssize_t>(n);
    }
    for (;;) {
      if (!is_readable()) return -1;  // the body deadline or the read timeout passed
      ssize_t n = ::recv(fd_, ptr, size, 0);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n > 0) body_read_ += static_cast<size_t>(n);
      return n;
    }
  }

  ssize_t write(const char* ptr, size_t size) override {
    size_t done = 0;
    while (done < size) {
      if (!WaitFd(fd_, POLLOUT, write_timeout_s_ * 1000)) return done ? static_cast<ssize_t>(done) : -1;
      ssize_t n = ::send(fd_, ptr + done, size - done, MSG_NOSIGNAL);
      if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
      if (n <= 0) return done ? static_cast<ssize_t>(done) : -1;
      done += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(done);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) ip = AddressText(addr, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) ip = AddressText(addr, port);
  }
  int socket() const override { return fd_; }
  size_t body_read() const { return body_read_; }

 private:
  bool Alive() const {
    char c;
    ssize_t n = ::recv(fd_, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR));
  }

  int fd_;
  std::string head_;
  size_t off_ = 0, body_read_ = 0;
  Clock::time_point deadline_;
  int read_timeout_s_, write_timeout_s_;
};

}  // namespace

// cpp-httplib's accept loop hands every socket to the task queue: ours admits it at once
// (on the accept thread, without blocking) instead of giving it a thread.
class AdmittingServer::Queue final : public httplib::TaskQueue {
 public:
  explicit Queue(AdmittingServer& owner) : owner_(owner) {}
  void enqueue(std::function<void()> fn) override { fn(); }  // -> process_and_close_socket
  void shutdown() override { owner_.Shutdown(); }

 private:
  AdmittingServer& owner_;
};

AdmittingServer::AdmittingServer(AdmissionLimits limits) : limits_(limits) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = wake_fd_;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
  set_keep_alive_timeout(limits_.keep_alive_s);  // what the Keep-Alive header advertises
  new_task_queue = [this] { return new Queue(*this); };
  poller_ = std::thread([this] { Poll(); });
  for (size_t i = 0; i < std::max<size_t>(1, limits_.workers); ++i) workers_.emplace_back([this] { Work(); });
}

AdmittingServer::~AdmittingServer() {
  Shutdown();
  ::close(epoll_fd_);
  ::close(wake_fd_);
}

size_t AdmittingServer::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_.size();
}

bool AdmittingServer::process_and_close_socket(int sock) {
  int one = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ::fcntl(sock, F_SETFL, ::fcntl(sock, F_GETFL) | O_NONBLOCK);
  Admit(sock, /*idle=*/false);
  return true;
}

void AdmittingServer::Admit(int fd, bool idle) {
  std::lock_guard lock(mutex_);
  if (stopping_) {
    ::close(fd);
    return;
  }
  // At the cap, the connection of the same kind that has waited longest makes room: a
  // flood of slow connections cannot keep a new client out, only push each other out.
  size_t cap = idle ? limits_.max_idle : limits_.max_waiting;
  size_t same = 0;
  auto oldest = waiting_.end();
  for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
    if (it->second.idle != idle) continue;
    ++same;
    if (oldest == waiting_.end() || it->second.since < oldest->second.since) oldest = it;
  }
  if (same >= cap && oldest != waiting_.end()) Drop(oldest->first);
  auto now = Clock::now();
  waiting_[fd] = Waiting{now, now + std::chrono::seconds(idle ? limits_.idle_timeout_s : limits_.header_timeout_s), idle};
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;  // edge: a peeked, unread header wakes us once
  ev.data.fd = fd;
  if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) Drop(fd);
}

void AdmittingServer::Drop(int fd) {
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  ::close(fd);
  waiting_.erase(fd);
}

void AdmittingServer::Poll() {
  std::string peek(limits_.max_header_bytes, '\0');
  epoll_event events[64];
  for (;;) {
    int n = ::epoll_wait(epoll_fd_, events, 64, 200);
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    auto now = Clock::now();
    for (int i = 0; i < n; ++i) {
      int fd = events[i].data.fd;
      auto it = waiting_.find(fd);
      if (fd == wake_fd_ || it == waiting_.end()) continue;
      ssize_t r = ::recv(fd, peek.data(), peek.size(), MSG_PEEK | MSG_DONTWAIT);
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
      if (r <= 0) {  // closed by the peer, or broken
        Drop(fd);
        continue;
      }
      if (size_t end = HeaderEnd(std::string_view(peek.data(), static_cast<size_t>(r)))) {
        ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
        waiting_.erase(it);
        ready_.emplace_back(fd, end);
        work_ready_.notify_one();
      } else if (static_cast<size_t>(r) >= peek.size()) {
        SendAndForget(fd, "HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
        Drop(fd);
      } else if (it->second.idle) {  // a kept-alive connection began its next request
        it->second = Waiting{now, now + std::chrono::seconds(limits_.header_timeout_s), false};
      }
    }
    std::vector<int> late;
    for (const auto& [fd, w] : waiting_) {
      if (w.deadline < now) late.push_back(fd);
    }
    for (int fd : late) {
      if (!waiting_[fd].idle) {
        SendAndForget(fd, "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      }
      Drop(fd);
    }
  }
}

void AdmittingServer::Work() {
  for (;;) {
    std::pair<int, size_t> job;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [this] { return stopping_ || !ready_.empty(); });
      if (stopping_) return;  // Shutdown closed what was still queued
      job = ready_.front();
      ready_.pop_front();
    }
    Serve(job.first, job.second);
  }
}

void AdmittingServer::Serve(int fd, size_t header_bytes) {
  std::string head(header_bytes, '\0');
  size_t got = 0;
  while (got < header_bytes) {  // peeked already: it is all there
    ssize_t r = ::recv(fd, head.data() + got, header_bytes - got, 0);
    if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!WaitFd(fd, POLLIN, 1000)) break;
      continue;
    }
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  if (got < header_bytes) {
    ::close(fd);
    return;
  }
  size_t announced = AnnouncedBody(head);
  AdmittedStream stream(fd, std::move(head), Clock::now() + std::chrono::seconds(limits_.body_timeout_s),
                        static_cast<int>(read_timeout_sec_), static_cast<int>(write_timeout_sec_));
  bool stopping;
  {
    std::lock_guard lock(mutex_);
    stopping = stopping_;
  }
  bool connection_closed = false;
  bool ok = process_request(stream, /*close_connection=*/stopping, connection_closed, nullptr);
  // A response given without reading the body (401, 403, 413 before the body) leaves the
  // body in the connection, where it would be taken for the next request: close instead.
  if (!ok || connection_closed || stopping || stream.body_read() < announced) {
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    return;
  }
  Admit(fd, /*idle=*/true);
}

void AdmittingServer::Shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
    std::vector<int> fds;
    for (const auto& [fd, w] : waiting_) fds.push_back(fd);
    for (int fd : fds) Drop(fd);
    for (const auto& [fd, bytes] : ready_) ::close(fd);
    ready_.clear();
  }
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  work_ready_.notify_all();
  if (poller_.joinable()) poller_.join();
  for (auto& t : workers_) {
    if (t.joinable()) t.join();
  }
}

}  // namespace parity::mcp
