#include "http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "cb/utc_time.h"
#include "endpoints.h"
#include "cb/flaky/endpoints.h"

namespace cb::flaky {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::size_t kReadChunk = 16384;
constexpr int kListenTimer = -1;
// A page of the record is written by the loop that serves it, and the other connections of that
// loop wait meanwhile: 10,000 entries are some 2 MB and 10 ms; a reader wanting more reads on
// from the page's cursor, and others are served between its pages.
constexpr std::uint64_t kMaxRecordPage = 10'000;
constexpr auto kAcceptPause = std::chrono::milliseconds(100);

std::int64_t wall_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Response json_response(int status, const nlohmann::json& body) {
  Response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

std::optional<std::uint64_t> param_u64(const Request& req, const char* name, std::uint64_t fallback) {
  const auto v = req.param(name);
  if (!v) return fallback;
  std::uint64_t out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc{} || p != v->data() + v->size()) return std::nullopt;
  return out;
}

std::string peer_of(const sockaddr_storage& addr) {
  char ip[INET6_ADDRSTRLEN] = "-";
  int port = 0;
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
    port = ntohs(a->sin6_port);
  }
  return std::string(ip) + ":" + std::to_string(port);
}

// As many descriptors as the hard limit allows: each connection holds one.
void raise_open_file_limit() {
  rlimit lim{};
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &lim);
  }
}

}  // namespace

// ---- One event loop ---------------------------------------------------------------------------

struct HttpServer::Loop {
  struct Conn {
    int fd = -1;
    std::string peer;
    std::string in;
    HeadScan scan;  // how far the head at the front of `in` has been parsed
    std::string out;
    std::size_t out_done = 0;
    enum class Phase : std::uint8_t { Idle, Head, Waiting, Closing } phase = Phase::Idle;
    Ending close_as = Ending::Close;  // Closing: FIN once the output is out, or RST
    bool peer_done = false;           // the client sent FIN: answer what came, then close
    Clock::time_point deadline{};     // Idle: keep-alive; Head: the request's; Waiting: the wait's
    std::uint32_t events = 0;         // what epoll watches now
    // Waiting: the request whose answer waits, and the answer.
    struct Pending {
      Request request;
      Arrival arrival;
      Reply reply;
      std::int64_t t0 = 0;
    };
    std::optional<Pending> pending;
  };

  HttpServer& server;
  int epfd = -1;
  std::map<int, std::unique_ptr<Conn>> conns;
  std::set<std::pair<Clock::time_point, int>> timers;  // (deadline, fd); kListenTimer: accepting again
  int listen_fd = -1;
  bool accept_paused = false;
  Clock::time_point accept_resume_at{};

  explicit Loop(HttpServer& s) : server(s), epfd(::epoll_create1(EPOLL_CLOEXEC)) {}
  ~Loop() {
    for (auto& [fd, c] : conns) ::close(fd);
    if (epfd >= 0) ::close(epfd);
  }

  const ServerOptions& options() const { return server.options_; }

  // The connection's one timer, `after` from now.
  void set_deadline(Conn& c, std::chrono::microseconds after) {
    timers.erase({c.deadline, c.fd});
    c.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(after);
    timers.insert({c.deadline, c.fd});
  }

  void watch(Conn& c, std::uint32_t events) {
    if (events == c.events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = c.fd;
    ::epoll_ctl(epfd, EPOLL_CTL_MOD, c.fd, &ev);
    c.events = events;
  }

  // What the connection must be told of: input unless a request waits (then only the client
  // leaving), and output while some is queued.
  void rewatch(Conn& c) {
    const bool closing = c.phase == Conn::Phase::Closing;
    const bool waiting = c.phase == Conn::Phase::Waiting;
    // EPOLLRDHUP is level-triggered: once the client's FIN has been read it is not watched
    // again, or it would be reported forever. A reset (EPOLLHUP, EPOLLERR) is always reported.
    std::uint32_t e = !closing && !c.peer_done && !input_full(c) ? std::uint32_t{EPOLLRDHUP} : 0U;
    if (!waiting && !closing && !c.peer_done && c.out.size() - c.out_done < options().max_pending_output) e |= EPOLLIN;
    if (c.out_done < c.out.size()) e |= EPOLLOUT;
    watch(c, e);
  }

  // The input held beyond the head limit and one read: reading stops there until requests are
  // served from it (a head that long is refused with 431 by the parser).
  bool input_full(const Conn& c) const { return c.in.size() > options().max_request_bytes + kReadChunk; }

  // Reads what the client has sent, up to input_full(). Returns false if the connection failed
  // and was closed.
  bool read_input(Conn& c) {
    char buf[kReadChunk];
    while (!input_full(c)) {
      const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n > 0) {
        c.in.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) c.peer_done = true;
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        if (c.pending) finish(c, Outcome::ClientGone);
        close_conn(c, false);
        return false;
      }
      break;
    }
    return true;
  }

  // Out of descriptors (or memory), the connection waiting in the backlog cannot be accepted,
  // and the listening socket stays readable: watched as before, the loop would spin on it at
  // full speed (as nginx would without its accept delay). So it is not watched until one of
  // this loop's connections closes or kAcceptPause passes; the backlog keeps the newcomers.
  void pause_accepting() {
    if (accept_paused) return;
    ::epoll_ctl(epfd, EPOLL_CTL_DEL, listen_fd, nullptr);
    accept_paused = true;
    accept_resume_at = Clock::now() + kAcceptPause;
    timers.insert({accept_resume_at, kListenTimer});
  }

  void resume_accepting() {
    if (!accept_paused) return;
    timers.erase({accept_resume_at, kListenTimer});
    accept_paused = false;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.fd = listen_fd;
    ::epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &ev);
  }

  void close_conn(Conn& c, bool reset) {
    if (reset) {
      // A zero linger time makes close() send RST instead of FIN: the client sees "connection
      // reset by peer", as from a crashed or overloaded server.
      linger hard{1, 0};
      ::setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    }
    timers.erase({c.deadline, c.fd});
    ::epoll_ctl(epfd, EPOLL_CTL_DEL, c.fd, nullptr);
    ::close(c.fd);
    server.open_connections_.fetch_sub(1, std::memory_order_relaxed);
    conns.erase(c.fd);   // c is gone from here on
    resume_accepting();  // a descriptor is free again
  }

  // Sends what is queued; closes the connection once it is all out and it is Closing. Returns
  // false when the connection was closed.
  bool flush(Conn& c) {
    while (c.out_done < c.out.size()) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.out_done, c.out.size() - c.out_done, MSG_NOSIGNAL);
      if (n > 0) {
        c.out_done += static_cast<std::size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (c.pending) finish(c, Outcome::ClientGone);
      close_conn(c, false);
      return false;
    }
    if (c.out_done == c.out.size()) {
      c.out.clear();
      c.out_done = 0;
      if (c.phase == Conn::Phase::Closing) {
        close_conn(c, c.close_as == Ending::Reset);
        return false;
      }
    }
    rewatch(c);
    return true;
  }

  void accept_all() {
    for (;;) {
      sockaddr_storage addr{};
      socklen_t len = sizeof addr;
      const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) pause_accepting();
        return;  // EAGAIN: no more for now
      }
      if (options().admit && !options().admit(fd)) {
        ::close(fd);
        continue;
      }
      int yes = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      if (const int bytes = options().socket_buffer_bytes; bytes > 0) {
        ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
        ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
      }
      if (server.open_connections_.fetch_add(1, std::memory_order_relaxed) >= options().max_connections) {
        // Over the limit: a clear refusal rather than a silent stall, and neither counted nor
        // recorded (it reached no endpoint).
        const std::string busy =
            serialize(Response{503, "text/plain", "too many open connections\n", {}}, false, ConnectionHeader::Close);
        (void)!::send(fd, busy.data(), busy.size(), MSG_NOSIGNAL);
        ::close(fd);
        server.open_connections_.fetch_sub(1, std::memory_order_relaxed);
        continue;
      }
      auto c = std::make_unique<Conn>();
      c->fd = fd;
      c->peer = peer_of(addr);
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.fd = fd;
      ::epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
      c->events = ev.events;
      Conn& ref = *c;
      conns.emplace(fd, std::move(c));
      idle(ref);
    }
  }

  // Completes the waiting request with `outcome` (its own when the wait ran out).
  void finish(Conn& c, Outcome outcome) {
    Conn::Pending p = std::move(*c.pending);
    c.pending.reset();
    p.reply.outcome = outcome;
    if (outcome != Outcome::Answered) p.reply.ending = Ending::Drop;
    c.phase = Conn::Phase::Head;
    respond(c, p.request, p.arrival, p.reply, p.t0);
    if (c.phase == Conn::Phase::Head) idle(c);
  }

  // Between requests: the keep-alive clock runs.
  void idle(Conn& c) {
    c.phase = Conn::Phase::Idle;
    set_deadline(c, options().keep_alive_timeout);
  }

  // No more requests on this connection: what is queued goes out, within the keep-alive time.
  void closing(Conn& c, Ending how) {
    c.phase = Conn::Phase::Closing;
    c.close_as = how;
    c.in.clear();
    set_deadline(c, options().keep_alive_timeout);
  }

  // Records how the request ended and queues its answer (or the way the connection ends).
  void respond(Conn& c, const Request& req, const Arrival& arrival, const Reply& reply, std::int64_t t0) {
    const int status = reply.outcome == Outcome::Answered ? reply.response.status : 0;
    const std::int64_t t1 = server.mono_us();
    server.record_.complete(arrival, reply.outcome, status, t1);
    if (options().observer) options().observer(arrival.seq, req.path, reply.outcome);
    if (options().access_log) server.log_line(req, c.peer, status, to_string(reply.outcome), t1 - t0);
    switch (reply.ending) {
      case Ending::Reset:
      case Ending::Drop: closing(c, reply.ending); return;
      case Ending::Garbage:
        c.out += kGarbage;
        closing(c, Ending::Close);
        return;
      case Ending::KeepAlive:
      case Ending::Close: answer(c, req, reply.response, reply.ending == Ending::Close); return;
    }
  }

  // Queues `res` for `req`; the connection then closes if asked to, or if the request or the
  // server means it must.
  void answer(Conn& c, const Request& req, const Response& res, bool close_after) {
    // No endpoint reads a body: one left unread would be taken for the next request, so the
    // connection ends after this answer instead.
    const bool close = close_after || !req.keep_alive || req.has_body || server.stopping_.load();
    // An HTTP/1.0 client closes unless told otherwise: one that asked for keep-alive and gets it
    // must be told, or it waits for the close until its own timeout.
    const ConnectionHeader said = close                    ? ConnectionHeader::Close
                                  : req.minor_version == 0 ? ConnectionHeader::KeepAlive
                                                           : ConnectionHeader::None;
    c.out += serialize(res, req.method == "HEAD", said);
    if (close) closing(c, Ending::Close);
  }

  // Serves the complete requests at the front of the input, in order, until one must wait or
  // the output is backed up.
  void drive(Conn& c) {
    const HeadLimits limits{options().max_request_bytes, 8 * 1024};
    while ((c.phase == Conn::Phase::Idle || c.phase == Conn::Phase::Head) && !c.in.empty()) {
      if (c.out.size() - c.out_done >= options().max_pending_output) break;
      if (c.phase == Conn::Phase::Idle) {
        // The first byte of a request starts its clock: a slow sender is closed, not served forever.
        c.phase = Conn::Phase::Head;
        set_deadline(c, options().request_timeout);
      }
      Parsed parsed = parse_request_head(c.in, limits, c.scan);
      if (parsed.kind == Parsed::Kind::NeedMore) break;
      if (parsed.kind == Parsed::Kind::Bad) {
        // Not a request to any endpoint: answered, neither counted nor recorded, and what
        // follows it on this connection cannot be trusted to be a request either.
        if (options().access_log) server.log_line(parsed.request, c.peer, parsed.status, "rejected", 0);
        c.out += serialize(Response{parsed.status, "text/plain", std::string(reason_phrase(parsed.status)) + "\n", {}},
                           false, ConnectionHeader::Close);
        closing(c, Ending::Close);
        break;
      }
      c.in.erase(0, parsed.consumed);
      c.scan = HeadScan{};
      serve(c, parsed.request);
      if (c.phase == Conn::Phase::Head) idle(c);
    }
    // A client that said it is done sending gets the answers to what it sent, then a close.
    if (c.peer_done && (c.phase == Conn::Phase::Idle || c.phase == Conn::Phase::Head)) closing(c, Ending::Close);
  }

  void serve(Conn& c, const Request& req) {
    if (req.path.rfind(path::kAdmin, 0) == 0) {
      const std::int64_t t0 = server.mono_us();
      Response res;
      const std::string_view outcome = server.admin(req, res);
      if (options().access_log) server.log_line(req, c.peer, res.status, outcome, server.mono_us() - t0);
      answer(c, req, res, false);
      return;
    }
    const Arrival arrival = server.record_.arrive(
        req.method, req.path, req.path == path::kCount ? Kind::Count : Kind::Lab, server.clock_, wall_us());
    const std::int64_t t0 = arrival.t_us;
    if (options().observer) options().observer(arrival.seq, req.path, Outcome::Pending);
    Reply reply = serve_endpoint(req, options(), Moment{t0, arrival.count_answer});
    if (req.path != path::kCount && reply.outcome == Outcome::Answered)
      reply.wait = std::max(reply.wait.value_or(0us), options().answer_floor);
    if (reply.wait && *reply.wait > 0us) {
      c.phase = Conn::Phase::Waiting;
      set_deadline(c, *reply.wait);
      c.pending = Conn::Pending{req, arrival, std::move(reply), t0};
      return;
    }
    respond(c, req, arrival, reply, t0);
  }

  void on_event(int fd, std::uint32_t events) {
    const auto it = conns.find(fd);
    if (it == conns.end()) return;
    Conn& c = *it->second;
    if (c.phase == Conn::Phase::Waiting && (events & (EPOLLHUP | EPOLLERR)) != 0) {
      // Reset while its answer waits: the client gave up on a /slow or /hang (its own timeout).
      finish(c, Outcome::ClientGone);
      flush(c);
      return;
    }
    if (c.phase == Conn::Phase::Waiting && (events & EPOLLRDHUP) != 0) {
      // A FIN while a request waits. TCP cannot tell a client that has only finished sending
      // (shutdown) from one that has closed: both may still be reading, and a half-closed client
      // that sent its whole request is owed its answers (RFC 9112 9.6). So a /slow answer is
      // still written when due, and what was pipelined before the FIN is served after it. A
      // /hang has no answer to wait for: the FIN is the client giving up.
      if (!read_input(c)) return;
      if (c.pending->reply.ending == Ending::Drop) {
        finish(c, Outcome::ClientGone);
        flush(c);
        return;
      }
      rewatch(c);
      return;
    }
    if ((events & EPOLLERR) != 0) {
      close_conn(c, false);
      return;
    }
    if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) != 0 && c.phase != Conn::Phase::Waiting &&
        c.phase != Conn::Phase::Closing) {
      if (!read_input(c)) return;
      if (c.peer_done && c.in.empty() && c.out_done == c.out.size()) {
        close_conn(c, false);
        return;
      }
      drive(c);
    }
    if (!flush(c)) return;
    // Output that was backed up has drained: the requests already read may go on.
    if ((c.phase == Conn::Phase::Idle || c.phase == Conn::Phase::Head) && !c.in.empty() &&
        c.out.size() - c.out_done < options().max_pending_output) {
      drive(c);
      flush(c);
    }
  }

  void on_timer(int fd) {
    if (fd == kListenTimer) {
      resume_accepting();
      return;
    }
    const auto it = conns.find(fd);
    if (it == conns.end()) return;
    Conn& c = *it->second;
    timers.erase({c.deadline, c.fd});
    switch (c.phase) {
      case Conn::Phase::Waiting: {
        const Outcome done = c.pending->reply.outcome;  // Answered for /slow, HangLimit for /hang
        finish(c, done);
        if (!flush(c)) return;
        drive(c);  // pipelined requests behind it
        flush(c);
        return;
      }
      case Conn::Phase::Idle:     // keep-alive ran out
      case Conn::Phase::Head:     // the request did not arrive whole in time
      case Conn::Phase::Closing:  // the client does not read what is left
        close_conn(c, false);
        return;
    }
  }

  // At a stop: what waits is cut and recorded as such; every connection is closed.
  void cut_all() {
    while (!conns.empty()) {
      Conn& c = *conns.begin()->second;
      if (c.pending) finish(c, Outcome::Cut);
      close_conn(c, false);
    }
  }

  void run(int listening, int stop_fd) {
    listen_fd = listening;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.fd = listen_fd;
    ::epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &ev);
    ev.events = EPOLLIN;  // level-triggered and never read: once written, every wait returns
    ev.data.fd = stop_fd;
    ::epoll_ctl(epfd, EPOLL_CTL_ADD, stop_fd, &ev);
    epoll_event ready[128];
    for (;;) {
      int timeout_ms = -1;
      if (!timers.empty()) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(timers.begin()->first - Clock::now());
        timeout_ms = static_cast<int>(std::clamp<long long>(left.count() + 1, 0, 24LL * 3600 * 1000));
      }
      const int n = ::epoll_wait(epfd, ready, 128, timeout_ms);
      if (server.stopping_.load(std::memory_order_acquire)) break;
      for (int i = 0; i < n; ++i) {
        const int fd = ready[i].data.fd;
        if (fd == stop_fd) continue;
        if (fd == listen_fd) {
          accept_all();
          continue;
        }
        on_event(fd, ready[i].events);
      }
      const auto now = Clock::now();
      while (!timers.empty() && timers.begin()->first <= now) on_timer(timers.begin()->second);
    }
    cut_all();
  }
};

// ---- The server -------------------------------------------------------------------------------

HttpServer::HttpServer(const ServerOptions& options, RequestRecord& record)
    : options_(options),
      record_(record),
      started_(Clock::now()),
      clock_([this] { return mono_us(); }),
      stop_fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

HttpServer::~HttpServer() {
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (stop_fd_ >= 0) ::close(stop_fd_);
}

Result<int> HttpServer::listen() {
  raise_open_file_limit();
  if (options_.listen_fd >= 0) {
    listen_fd_ = options_.listen_fd;
    int listening = 0;
    socklen_t len = sizeof listening;
    if (::getsockopt(listen_fd_, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening == 0)
      return Error{"the socket handed to the server is not listening"};
    ::fcntl(listen_fd_, F_SETFL, ::fcntl(listen_fd_, F_GETFL) | O_NONBLOCK);
    ::fcntl(listen_fd_, F_SETFD, FD_CLOEXEC);
  } else if (auto bound = bind_address(); !bound) {
    return bound.error();
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  return addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                    : ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
}

Result<void> HttpServer::bind_address() {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string where = "cannot listen on " + options_.host + ":" + std::to_string(options_.port) + ": ";
  // "localhost" by hand: a statically linked server must not need the system's resolver (NSS)
  // for the one name it accepts without --allow-remote.
  const std::string host = options_.host == "localhost" ? "127.0.0.1" : options_.host;
  if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(options_.port).c_str(), &hints, &found); rc != 0)
    return Error{where + ::gai_strerror(rc)};
  std::string reason = "no address to bind";
  for (addrinfo* ai = found; ai != nullptr && listen_fd_ < 0; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      reason = std::strerror(errno);
      continue;
    }
    // SO_REUSEADDR only: SO_REUSEPORT would let a second server bind the same port and share
    // the traffic, so a port in use would not be an error.
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, SOMAXCONN) != 0) {
      reason = std::strerror(errno);
      ::close(fd);
      continue;
    }
    listen_fd_ = fd;
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) {
    // Lower-case, as the rest of the line: "address already in use".
    if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
    return Error{where + reason};
  }
  return {};
}

void HttpServer::run() {
  std::vector<std::unique_ptr<Loop>> loops;
  for (int i = 0; i < options_.threads; ++i) loops.push_back(std::make_unique<Loop>(*this));
  std::vector<std::thread> others;
  for (std::size_t i = 1; i < loops.size(); ++i)
    others.emplace_back([this, loop = loops[i].get()] { loop->run(listen_fd_, stop_fd_); });
  loops[0]->run(listen_fd_, stop_fd_);
  for (auto& t : others) t.join();
  // Stopped: from now on a connection is refused, not left in a backlog nobody reads.
  ::close(listen_fd_);
  listen_fd_ = -1;
}

void HttpServer::begin_stop() {
  stopping_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  (void)!::write(stop_fd_, &one, sizeof one);
}

std::int64_t HttpServer::mono_us() const {
  if (options_.clock) return options_.clock().count();
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started_).count();
}

std::string_view HttpServer::admin(const Request& req, Response& res) {
  const bool read = req.method == "GET" || req.method == "HEAD";
  std::string_view outcome = "admin";
  const auto token = req.header("X-CB-Admin");
  if (!options_.admin_token.empty() && (!token || *token != options_.admin_token)) {
    // A locked server: refused, and kept in the record (not counted) for the grader to see.
    const Arrival refused = record_.arrive(req.method, req.path, Kind::RefusedAdmin, clock_, wall_us());
    res = json_response(403, {{"error", "this server's admin endpoints belong to the grader"}});
    record_.complete(refused, Outcome::Answered, 403, mono_us());
    outcome = "refused";
  } else if (req.path == path::kAdminRecord && read) {
    const auto since = param_u64(req, "since", 0);
    const auto limit = param_u64(req, "limit", 10'000);
    if (!since || !limit || *limit == 0 || *limit > kMaxRecordPage) {
      res = json_response(
          400, {{"error", "since must be a whole number, limit one from 1 to " + std::to_string(kMaxRecordPage)}});
      return outcome;
    }
    res.status = 200;
    res.content_type = "application/json";
    res.body = to_json(record_.read(*since, static_cast<std::size_t>(*limit)));
  } else if (req.path == path::kAdminReset && req.method == "POST") {
    const auto epoch = record_.reset();
    res = json_response(200, {{"reset", true}, {"epoch", epoch}, {"count", 0}});
  } else if (req.path == path::kAdminHealth && read) {
    res = json_response(200, {{"status", "ok"},
                              {"uptime_ms", static_cast<double>(mono_us()) / 1000.0},
                              {"count", record_.count()},
                              {"epoch", record_.read(0, 1).epoch}});
  } else if (req.path == path::kAdminRecord || req.path == path::kAdminReset || req.path == path::kAdminHealth) {
    res = json_response(405, {{"error", "method not allowed"}});
    res.headers.emplace_back("Allow", req.path == path::kAdminReset ? "POST" : "GET, HEAD");
  } else {
    res = json_response(404, {{"error", "no such admin endpoint (record, reset, health)"}});
  }
  return outcome;
}

void HttpServer::log_line(const Request& req, const std::string& peer, int status, std::string_view outcome,
                          std::int64_t duration_us) const {
  std::string target = req.target.empty() ? "-" : req.target.substr(0, 200);
  for (char& ch : target)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  const std::string method = req.method.empty() ? "-" : req.method;
  const std::string status_text = status > 0 ? std::to_string(status) : "-";
  // One fprintf per line: stdio locks the stream, so lines from several loops never interleave.
  std::fprintf(stderr, "%s %s %s %s %s %.*s %.3fms\n", format_utc(wall_us()).c_str(), peer.c_str(), method.c_str(),
               target.c_str(), status_text.c_str(), static_cast<int>(outcome.size()), outcome.data(),
               static_cast<double>(duration_us) / 1000.0);
}

}  // namespace cb::flaky
