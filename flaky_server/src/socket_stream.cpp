#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "connection.h"

namespace cb::flaky {
namespace {

thread_local Connection* tl_connection = nullptr;

// Not HTTP in any version: no "HTTP/" prefix, no status code where one would be.
constexpr char kGarbage[] = "GARBAGE 0xDEADBEEF this is not an HTTP response\r\n\r\n";

bool poll_one(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  int r = 0;
  do {
    r = ::poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  return r > 0;
}

void address_of(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  if ((peer ? ::getpeername(fd, sa, &len) : ::getsockname(fd, sa, &len)) != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<sockaddr_in*>(&addr);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<sockaddr_in6*>(&addr);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    port = ntohs(in6->sin6_port);
  }
  ip = text;
}

}  // namespace

Connection* current_connection() noexcept { return tl_connection; }
void set_current_connection(Connection* c) noexcept { tl_connection = c; }

SocketStream::SocketStream(Connection& conn, std::chrono::microseconds request_timeout, std::size_t max_request_bytes)
    : conn_(conn), request_timeout_(request_timeout), max_request_bytes_(max_request_bytes) {
  start_request();
}

void SocketStream::start_request() {
  deadline_ = std::chrono::steady_clock::now() + request_timeout_;
  request_bytes_ = 0;
}

int SocketStream::millis_left() const {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<std::chrono::milliseconds::rep>(left.count(), 0));
}

bool SocketStream::is_readable() const { return has_buffered() || poll_one(conn_.fd, POLLIN, millis_left()); }

bool SocketStream::is_writable() const { return poll_one(conn_.fd, POLLOUT, millis_left()); }

ssize_t SocketStream::read(char* ptr, size_t size) {
  // Whatever was written must be out before waiting for the peer (a "100 Continue").
  if (!out_.empty() && !flush()) return -1;
  if (!has_buffered()) {
    // The budget counts what was received for this request; past it, the request is refused by
    // failing the read (httplib then closes the connection).
    if (request_bytes_ >= max_request_bytes_) return -1;
    // Try first, wait only if nothing is there: the connection loop has usually just seen the
    // socket readable, and a poll per read would double the system calls per request.
    ssize_t n = 0;
    for (;;) {
      n = ::recv(conn_.fd, buf_.data(), buf_.size(), MSG_DONTWAIT);
      if (n >= 0 || errno == EINTR) {
        if (n >= 0) break;
        continue;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
      if (!poll_one(conn_.fd, POLLIN, millis_left())) return -1;
    }
    if (n == 0) return 0;
    pos_ = 0;
    len_ = static_cast<std::size_t>(n);
    request_bytes_ += len_;
  }
  const std::size_t n = std::min(size, len_ - pos_);
  std::memcpy(ptr, buf_.data() + pos_, n);
  pos_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t SocketStream::write(const char* ptr, size_t size) {
  switch (conn_.ending) {
    case Connection::Ending::Drop:
    case Connection::Ending::Reset:
      return -1;  // nothing goes out; the connection loop closes or resets it
    case Connection::Ending::Garbage:
      out_.assign(kGarbage, sizeof kGarbage - 1);  // instead of the response httplib was writing
      (void)flush();
      conn_.ending = Connection::Ending::Close;
      return -1;
    case Connection::Ending::KeepAlive:
    case Connection::Ending::Close:
      break;
  }
  // httplib writes a response's head and body separately; held here, they leave in one send
  // (one segment, one wake-up of the client) when the connection loop flushes.
  out_.append(ptr, size);
  if (out_.size() >= kFlushAt && !flush()) return -1;
  return static_cast<ssize_t>(size);
}

bool SocketStream::flush() {
  std::size_t sent = 0;
  while (sent < out_.size()) {
    const ssize_t n = ::send(conn_.fd, out_.data() + sent, out_.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n >= 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) break;
    // A full send buffer: the reader is slow. It gets the request's remaining time (at least a
    // second), then the connection is dropped.
    if (!poll_one(conn_.fd, POLLOUT, std::max(millis_left(), 1000))) break;
  }
  const bool whole = sent == out_.size();
  out_.clear();
  return whole;
}

SocketStream::Arrival SocketStream::await_request() {
  if (has_buffered()) return Arrival::Data;
  const ssize_t n = ::recv(conn_.fd, buf_.data(), buf_.size(), 0);
  if (n > 0) {
    pos_ = 0;
    len_ = static_cast<std::size_t>(n);
    return Arrival::Data;
  }
  if (n == 0) return Arrival::Closed;
  return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? Arrival::Quiet : Arrival::Closed;
}

// Asked for on every request; the answer cannot change within a connection.
void SocketStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  if (remote_port_ < 0) address_of(conn_.fd, true, remote_ip_, remote_port_);
  ip = remote_ip_;
  port = remote_port_;
}
void SocketStream::get_local_ip_and_port(std::string& ip, int& port) const { address_of(conn_.fd, false, ip, port); }

}  // namespace cb::flaky
