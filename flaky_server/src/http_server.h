#pragma once
// cpp-httplib's Server, with our own connection loop and router. Why not its defaults:
// - Nagle's algorithm would hold each small keep-alive response ~40 ms: TCP_NODELAY is set.
// - Its thread pool stalls keep-alive clients beyond the pool size until one times out: an idle
//   connection here gives its thread up as soon as another connection waits for one.
// - It keeps connections only 5 requests: here a connection lives until idle or told to close.
// - SO_REUSEPORT (its default) would let a second server bind the same port and share the
//   traffic: only SO_REUSEADDR is set, so a port in use is an error.
// - Its regex routes run per request: one pre-routing handler dispatches on the exact path.
// - /reset and /garbage need the socket itself: the connection loop owns it (connection.h).

#include <httplib.h>

#include <atomic>
#include <chrono>

#include "cb/flaky/options.h"
#include "cb/flaky/record.h"
#include "connection.h"

namespace cb::flaky {

class WorkerPool;

class HttpServer final : public httplib::Server {
 public:
  HttpServer(const ServerOptions& options, RequestRecord& record);
  ~HttpServer() override;

  // After bind: httplib listens with a backlog of 5, too few for 16 clients connecting at once.
  void widen_backlog();

  // Stops accepting and wakes everything that waits (keep-alive, /slow, /hang).
  void begin_stop();
  [[nodiscard]] bool stopping() const noexcept { return stopping_.load(std::memory_order_acquire); }

  enum class Wake { Elapsed, ClientGone, Stopping };
  // Waits up to `d`, watching for the server stopping and the client going away.
  Wake wait(const Connection& conn, std::chrono::microseconds d);

  [[nodiscard]] std::int64_t mono_us() const;
  [[nodiscard]] const ServerOptions& options() const noexcept { return options_; }
  [[nodiscard]] RequestRecord& record() noexcept { return record_; }

 private:
  bool process_and_close_socket(socket_t sock) override;
  bool wait_for_next_request(const Connection& conn, SocketStream& strm, bool first);
  HandlerResponse route(const httplib::Request& req, httplib::Response& res);
  // Answers /admin/*; returns the access log's outcome word ("admin", or "refused" on a locked
  // server, where the refusal is also kept in the record, arriving at `t0`).
  std::string_view admin(const httplib::Request& req, httplib::Response& res, std::int64_t t0);
  void log_line(const httplib::Request& req, int status, std::string_view outcome, std::int64_t duration_us) const;

  ServerOptions options_;
  RequestRecord& record_;
  std::chrono::steady_clock::time_point started_;
  std::atomic<bool> stopping_{false};
  // Readable once the server is stopping (an eventfd that is written once and never read), so
  // every wait can include it in its poll and wake at once.
  int stop_fd_ = -1;
  WorkerPool* pool_ = nullptr;  // owned by httplib's listen loop
};

}  // namespace cb::flaky
