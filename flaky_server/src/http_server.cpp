#include "http_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cb/utc_time.h"
#include "endpoints.h"
#include "worker_pool.h"

namespace cb::flaky {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// How often a thread waiting for the next request on a quiet connection looks up to check for
// a stop or for connections waiting for a thread.
constexpr auto kWakeEvery = 25ms;

std::int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}


bool has_body(const httplib::Request& req) {
  return (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0") ||
         req.has_header("Transfer-Encoding");
}

void json_reply(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
}

std::optional<std::uint64_t> param_u64(const httplib::Request& req, const char* name, std::uint64_t fallback) {
  if (!req.has_param(name)) return fallback;
  const std::string v = req.get_param_value(name);
  std::uint64_t out = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc{} || p != v.data() + v.size()) return std::nullopt;
  return out;
}

}  // namespace

HttpServer::HttpServer(const ServerOptions& options, RequestRecord& record)
    : options_(options), record_(record), started_(Clock::now()), stop_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  set_tcp_nodelay(true);
  // Only for the Keep-Alive header httplib writes; the connection loop below does the keeping.
  set_keep_alive_timeout(std::max<time_t>(1, std::chrono::duration_cast<std::chrono::seconds>(options.keep_alive_timeout).count()));
  set_keep_alive_max_count(1'000'000);
  new_task_queue = [this] {
    auto* pool = new WorkerPool(options_.threads);
    pool_ = pool;
    return pool;
  };
  set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) { return route(req, res); });
  // Requests httplib answers itself (400 for a malformed request line, 414 for a long URI) never
  // reach route(); they are logged here, and neither counted nor recorded: they are not
  // requests to any endpoint.
  set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    const Connection* conn = current_connection();
    if (options_.access_log && conn != nullptr && !conn->routed) log_line(req, res.status, "rejected", 0);
  });
}

HttpServer::~HttpServer() { ::close(stop_fd_); }

void HttpServer::widen_backlog() { ::listen(svr_sock_, SOMAXCONN); }

void HttpServer::begin_stop() {
  stopping_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  (void)!::write(stop_fd_, &one, sizeof one);
  // httplib's stop() does nothing until its listen loop has set is_running_, so a stop that comes
  // right after start would leave the loop blocked in accept() for good. Closing the socket
  // here works whenever it comes: a loop already in accept() wakes, one not yet started never
  // enters it.
  const socket_t sock = svr_sock_.exchange(INVALID_SOCKET);
  if (sock != INVALID_SOCKET) {
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
  }
}

std::int64_t HttpServer::mono_us() const {
  if (options_.clock) return options_.clock().count();
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started_).count();
}

// One poll on the client's socket and the stop signal, for the whole wait: POLLRDHUP (with
// POLLHUP and POLLERR, always reported) says the client has gone, without reading anything it
// may have sent.
HttpServer::Wake HttpServer::wait(const Connection& conn, std::chrono::microseconds d) {
  const auto until = Clock::now() + d;
  for (;;) {
    if (stopping()) return Wake::Stopping;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left <= 0ms) return Wake::Elapsed;
    pollfd p[2] = {{conn.fd, POLLRDHUP, 0}, {stop_fd_, POLLIN, 0}};
    const int timeout = static_cast<int>(std::min<long long>(left.count() + 1, 24LL * 3600 * 1000));
    if (::poll(p, 2, timeout) > 0 && (p[0].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0) return Wake::ClientGone;
  }
}

// Before a request: wait for it, but not past the keep-alive timeout and not once the server
// is stopping. Between requests on a keep-alive connection, also give the thread up when other
// connections wait for one and this one has been idle a moment: the stall cpp-httplib's own
// pool has when clients outnumber threads. The moment (50 ms) keeps a client that is about to
// send its next request from finding the connection closed under it.
//
// The wait is a blocking receive that SO_RCVTIMEO (kWakeEvery) cuts short, rather than a poll and
// then a receive: one system call per request fewer, and a stop is still seen within kWakeEvery.
bool HttpServer::wait_for_next_request(const Connection&, SocketStream& strm, bool first) {
  const auto start = Clock::now();
  const auto until = start + options_.keep_alive_timeout;
  for (;;) {
    if (stopping()) return false;
    switch (strm.await_request()) {
      case SocketStream::Arrival::Data: return true;
      case SocketStream::Arrival::Closed: return false;
      case SocketStream::Arrival::Quiet: break;
    }
    const auto now = Clock::now();
    if (now >= until) return false;
    if (!first && now - start >= 50ms && pool_ != nullptr && pool_->waiting() > 0) return false;
  }
}

bool HttpServer::process_and_close_socket(socket_t sock) {
  Connection conn;
  conn.fd = sock;
  int yes = 1;
  ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  const timeval wake{0, static_cast<suseconds_t>(std::chrono::microseconds(kWakeEvery).count())};
  ::setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &wake, sizeof wake);
  SocketStream strm(conn, options_.request_timeout, options_.max_request_bytes);
  set_current_connection(&conn);
  bool ok = true;
  for (bool first = true; wait_for_next_request(conn, strm, first); first = false) {
    strm.start_request();
    conn.routed = false;
    bool client_closes = false;
    const bool last = stopping() || (pool_ != nullptr && pool_->waiting() > 0);
    ok = process_request(strm, last, client_closes, nullptr) && strm.flush();
    // A request httplib refused before routing (a malformed line, a long URI) got its 400 or
    // 414; what follows it on this connection cannot be trusted to be a request either.
    if (!ok || client_closes || last || !conn.routed || conn.ending != Connection::Ending::KeepAlive) break;
  }
  set_current_connection(nullptr);
  if (conn.ending == Connection::Ending::Reset) {
    // A zero linger time makes close() send RST instead of FIN: the client sees "connection
    // reset by peer", as from a crashed or overloaded server.
    linger hard{1, 0};
    ::setsockopt(sock, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  }
  ::close(sock);
  return ok;
}

httplib::Server::HandlerResponse HttpServer::route(const httplib::Request& req, httplib::Response& res) {
  Connection* conn = current_connection();
  conn->routed = true;
  const std::int64_t t0 = mono_us();
  if (req.path.rfind("/admin/", 0) == 0) {
    const std::string_view outcome = admin(req, res, t0);
    if (options_.access_log) log_line(req, res.status, outcome, mono_us() - t0);
    return HandlerResponse::Handled;
  }
  const Arrival arrival = record_.arrive(req.method, req.path, req.path == "/count" ? Kind::Count : Kind::Lab, t0, wall_us());
  if (options_.observer) options_.observer(arrival.seq, req.path, Outcome::Pending);
  Call call{req, res, *conn, *this, arrival};
  serve_endpoint(call);
  // No endpoint reads a request body; one left unread would be taken for the next request, so
  // the connection ends after this answer instead.
  if (has_body(req) && conn->ending == Connection::Ending::KeepAlive) {
    conn->ending = Connection::Ending::Close;
    res.set_header("Connection", "close");
  }
  const int status = call.outcome == Outcome::Answered ? (res.status == -1 ? 200 : res.status) : 0;
  const std::int64_t t1 = mono_us();
  record_.complete(arrival, call.outcome, status, t1);
  if (options_.observer) options_.observer(arrival.seq, req.path, call.outcome);
  if (options_.access_log) log_line(req, status, to_string(call.outcome), t1 - t0);
  return HandlerResponse::Handled;
}

std::string_view HttpServer::admin(const httplib::Request& req, httplib::Response& res, std::int64_t t0) {
  const bool read = req.method == "GET" || req.method == "HEAD";
  std::string_view outcome = "admin";
  if (!options_.admin_token.empty() && req.get_header_value("X-CB-Admin") != options_.admin_token) {
    // A locked server: refused, and kept in the record (not counted) for the grader to see.
    const Arrival refused = record_.arrive(req.method, req.path, Kind::RefusedAdmin, t0, wall_us());
    json_reply(res, 403, {{"error", "this server's admin endpoints belong to the grader"}});
    record_.complete(refused, Outcome::Answered, 403, mono_us());
    outcome = "refused";
  } else if (req.path == "/admin/record" && read) {
    const auto since = param_u64(req, "since", 0);
    const auto limit = param_u64(req, "limit", 10'000);
    if (!since || !limit || *limit == 0 || *limit > 100'000) {
      json_reply(res, 400, {{"error", "since must be a whole number, limit one from 1 to 100000"}});
      return outcome;
    }
    res.status = 200;
    res.set_content(to_json(record_.read(*since, static_cast<std::size_t>(*limit))), "application/json");
  } else if (req.path == "/admin/reset" && req.method == "POST") {
    const auto epoch = record_.reset();
    json_reply(res, 200, {{"reset", true}, {"epoch", epoch}, {"count", 0}});
  } else if (req.path == "/admin/health" && read) {
    json_reply(res, 200, {{"status", "ok"}, {"uptime_ms", static_cast<double>(mono_us()) / 1000.0},
                          {"count", record_.count()}, {"epoch", record_.read(0, 1).epoch}});
  } else if (req.path == "/admin/record" || req.path == "/admin/reset" || req.path == "/admin/health") {
    res.set_header("Allow", req.path == "/admin/reset" ? "POST" : "GET, HEAD");
    json_reply(res, 405, {{"error", "method not allowed"}});
  } else {
    json_reply(res, 404, {{"error", "no such admin endpoint (record, reset, health)"}});
  }
  if (has_body(req)) {
    current_connection()->ending = Connection::Ending::Close;
    res.set_header("Connection", "close");
  }
  return outcome;
}

void HttpServer::log_line(const httplib::Request& req, int status, std::string_view outcome,
                          std::int64_t duration_us) const {
  std::string target = req.target.empty() ? "-" : req.target.substr(0, 200);
  for (char& ch : target)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  const std::string method = req.method.empty() ? "-" : req.method;
  const std::string status_text = status > 0 ? std::to_string(status) : "-";
  // One fprintf per line: stdio locks the stream, so lines from many threads never interleave.
  std::fprintf(stderr, "%s %s:%d %s %s %s %.*s %.3fms\n", format_utc(wall_us()).c_str(), req.remote_addr.empty() ? "-" : req.remote_addr.c_str(),
               req.remote_port, method.c_str(), target.c_str(), status_text.c_str(), static_cast<int>(outcome.size()),
               outcome.data(), static_cast<double>(duration_us) / 1000.0);
}

}  // namespace cb::flaky
