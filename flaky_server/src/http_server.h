#pragma once
// The flaky server's HTTP side: event loops (epoll) that hold every connection, and the router.
//
// Readiness, not threads, holds a connection: an idle keep-alive connection, a client still
// sending its request, a /slow answer waiting its delay and a /hang waiting for the client to
// give up each cost a file descriptor and a timer, never a thread. So any number of silent
// clients cannot keep a fresh one from being answered at once.
//
// Each of `threads` loops has its own epoll set; all of them watch the one listening socket
// (EPOLLEXCLUSIVE: a new connection wakes one loop), and the loop that accepts a connection owns
// it to the end. The request record is the only state they share.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "cb/flaky/options.h"
#include "cb/flaky/record.h"
#include "cb/result.h"
#include "http_message.h"

namespace cb::flaky {

class HttpServer {
 public:
  HttpServer(const ServerOptions& options, RequestRecord& record);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; returns the port (the free one chosen for port 0). Errors name the
  // address and why ("address already in use").
  [[nodiscard]] Result<int> listen();
  // Serves until begin_stop(): runs the loops, the last one on the calling thread.
  void run();
  // Stops accepting, cuts what waits, closes every connection; run() then returns. Any thread.
  void begin_stop();

  [[nodiscard]] std::int64_t mono_us() const;

 private:
  struct Loop;
  friend struct Loop;

  // Binds and listens on options_.host:port (listen() unless a socket was handed over).
  [[nodiscard]] Result<void> bind_address();
  // /admin/*: the record, a reset, the health. Returns the access log's outcome word.
  std::string_view admin(const Request& req, Response& res);
  void log_line(const Request& req, const std::string& peer, int status, std::string_view outcome,
                std::int64_t duration_us) const;

  ServerOptions options_;
  RequestRecord& record_;
  std::chrono::steady_clock::time_point started_;
  std::function<std::int64_t()> clock_;  // mono_us(), for the record to read under its lock
  int listen_fd_ = -1;
  int stop_fd_ = -1;  // an eventfd written once at stop and never read: every loop wakes
  std::atomic<bool> stopping_{false};
  std::atomic<int> open_connections_{0};
};

}  // namespace cb::flaky
