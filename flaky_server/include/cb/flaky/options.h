#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "cb/flaky/record.h"

#include "cb/result.h"
#include "cb/flaky/endpoints.h"

namespace cb::flaky {

using namespace std::chrono_literals;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = kDefaultPort;  // 0: any free port (the "listening on" line says which)
  // >= 0: a socket already bound and listening, to serve instead of binding host:port; the
  // server owns it from start() on, whether start succeeds or not. cb-grade makes it inside a
  // graded program's own network namespace, where the program's 127.0.0.1:8110 is.
  int listen_fd = -1;
  bool allow_remote = false;                        // binding anything but loopback needs this, on purpose
  std::chrono::microseconds toggle_period = 4s;     // /toggle: healthy, then 500, in turns (the toggle scene)
  std::chrono::microseconds slow_default = 3500ms;  // /slow without ?ms=: past the lab's 3 s slow line
  std::chrono::microseconds hang_limit = 60s;       // /hang gives up on a forgotten client after this
  // A lab request is answered no sooner than this after it arrived. A program stamps a transition
  // after one answer and before its next request, so with a millisecond between a request's
  // arrival and its answer, a stamp to the millisecond never holds the next answer too: the
  // grader can always tell which answer a transition followed. 0 for load tests.
  std::chrono::microseconds answer_floor = 1ms;
  std::size_t record_capacity = 10'000;  // entries the request record holds
  // Event loops, each on a thread of its own. A connection holds a file descriptor and a timer,
  // never a thread, so one loop serves any number of them; more loops only spread the work over
  // more cores.
  int threads = 1;
  // Open connections at most (each is a file descriptor); one more is answered 503 and closed.
  int max_connections = 10'000;
  // A connection's answers not yet read by its client, beyond which the server stops reading its
  // pipelined requests until the client reads: one that sends without reading cannot grow the
  // server's memory past this, times max_connections.
  std::size_t max_pending_output = 1 << 20;
  // Each accepted connection's kernel buffers (SO_RCVBUF and SO_SNDBUF; the kernel doubles what
  // it is given): 0, the kernel's own, which grow to megabytes a connection. A client that sends
  // and never reads then holds this much of the server's kernel memory, times max_connections.
  int socket_buffer_bytes = 0;
  bool access_log = false;  // one line per request on stderr
  // Non-empty: /admin/* answers only requests carrying "X-CB-Admin: <token>"; any other is
  // refused with 403 and kept in the record. cb-grade --run sets a secret one, so the program
  // it grades can neither reset nor rewrite the evidence.
  std::string admin_token;
  // Per request: how long a client may take to send it, and how many bytes it may be.
  std::chrono::microseconds request_timeout = 5s;
  std::size_t max_request_bytes = 64 * 1024;
  std::chrono::microseconds keep_alive_timeout = 5s;
  // The server's monotonic clock, as time since it started: what /toggle's phase and the
  // record's t_ms read. Empty: std::chrono::steady_clock. Tests set it to move time by hand.
  std::function<std::chrono::microseconds()> clock;
  // Told of every lab request as it arrives (Outcome::Pending) and as it ends, on the worker
  // thread, outside any lock. For tests that must act once the server has seen something.
  std::function<void(std::uint64_t seq, std::string_view path, Outcome outcome)> observer;
  // Asked of each connection as it is accepted, before a byte of it is read: false closes it
  // unanswered and unrecorded. cb-grade's fallback, which shares the machine's network, admits
  // only the program it grades, so that no other program's requests enter the evidence.
  std::function<bool(int fd)> admit;
};

// Every rule a configuration must obey; errors name the flag.
[[nodiscard]] Result<void> validate(const ServerOptions& o);

// 127.0.0.0/8, ::1 and "localhost".
[[nodiscard]] bool is_loopback(const std::string& host);

}  // namespace cb::flaky
