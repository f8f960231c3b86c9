#pragma once
// The flaky server as a library: tests and cb-lab start it in-process, flaky-server (main.cpp)
// wraps it in a program. Endpoints (docs/FLAKY_SERVER.md):
//
//   lab        GET|HEAD /fast (200), /always500 (500), /bad (400), /count ({"count": N})
//   scenarios  /slow?ms=N (200 after N ms; default 3500), /hang (never answers), /toggle
//              (200 and 500 in turns), /status/NNN (that status), /reset (connection reset),
//              /garbage (bytes that are not HTTP)
//   admin      GET /admin/record?since=S&limit=L, POST /admin/reset, GET /admin/health
//
// Every request but /count and /admin/* is a lab request: counted, whatever its path or method.
// /count is recorded, with the value it answered, but not counted; admin requests are neither.

#include <memory>
#include <string>

#include "cb/flaky/options.h"
#include "cb/flaky/record.h"
#include "cb/result.h"

namespace cb::flaky {

class HttpServer;

class FlakyServer {
 public:
  // Binds and starts serving on a thread of its own; when this returns, connections are
  // accepted. Errors: a bad option (naming it) or an address that cannot be bound.
  [[nodiscard]] static Result<std::unique_ptr<FlakyServer>> start(const ServerOptions& options);
  ~FlakyServer();  // stops
  FlakyServer(const FlakyServer&) = delete;
  FlakyServer& operator=(const FlakyServer&) = delete;

  [[nodiscard]] int port() const noexcept { return port_; }
  [[nodiscard]] std::string url() const;  // http://127.0.0.1:PORT (or http://[::1]:PORT)

  // Stops accepting, ends keep-alive connections, and cuts slow and hanging requests; returns
  // once every worker has finished (well within a second). Idempotent.
  void stop();

  [[nodiscard]] RequestRecord& record() noexcept;

 private:
  FlakyServer() = default;
  std::unique_ptr<HttpServer> http_;
  int port_ = 0;
  std::string host_;
  struct Runner;
  std::unique_ptr<Runner> runner_;
};

}  // namespace cb::flaky
