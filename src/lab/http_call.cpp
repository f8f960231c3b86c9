#include "cb/lab/http_call.h"
#include "cb/flaky/endpoints.h"
#include "cb/owned_fd.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace cb::lab {
namespace {

using Clock = std::chrono::steady_clock;
using classify::Origin;
constexpr std::size_t kMaxAnswer = 64 * 1024;

// Rounded up: a poll for the truncated remainder would give up a fraction of a millisecond
// before the deadline, and a 150 ms timeout would fire at 149.5 ms.
int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<long long>((left + 999) / 1000, 0));
}

// "HTTP/1.x NNN reason" -> NNN, or -1 if this is not a status line.
int status_of(const std::string& line) {
  if (line.size() < 12 || line.compare(0, 7, "HTTP/1.") != 0 || line[8] != ' ') return -1;
  int code = 0;
  auto [p, ec] = std::from_chars(line.data() + 9, line.data() + 12, code);
  if (ec != std::errc{} || p != line.data() + 12 || code < 100 || code > 599) return -1;
  if (line.size() > 12 && line[12] != ' ') return -1;
  return code;
}

// Headers and a Content-Length's worth of body: the whole answer, whether or not the server
// closes (it should: we asked it to).
bool answer_complete(const std::string& in) {
  const auto end = in.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  std::string head = in.substr(0, end);
  for (char& c : head)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  const auto at = head.find("\r\ncontent-length:");
  if (at == std::string::npos) return false;
  std::size_t length = 0;
  const char* p = head.data() + at + 17;
  while (*p == ' ') ++p;
  std::from_chars(p, head.data() + head.size(), length);
  return in.size() - end - 4 >= length;
}

HttpAnswer failed(Origin origin, std::string detail) {
  HttpAnswer a;
  a.observation = {origin, 0};
  a.detail = std::move(detail);
  return a;
}

HttpAnswer attempt(const ServerUrl& server, const std::string& method, const std::string& path,
                   std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const std::string after = "no answer after " + std::to_string(timeout.count()) + " ms";
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(server.host.c_str(), std::to_string(server.port).c_str(), &hints, &found) != 0 || found == nullptr)
    return failed(Origin::ConnectRefused, "cannot resolve " + server.host);
  const OwnedFd s(::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  int rc = ::connect(s.get(), found->ai_addr, found->ai_addrlen);
  ::freeaddrinfo(found);
  if (rc != 0 && errno != EINPROGRESS) return failed(Origin::ConnectRefused, std::strerror(errno));
  if (rc != 0) {
    pollfd p{s.get(), POLLOUT, 0};
    if (::poll(&p, 1, ms_left(deadline)) <= 0) return failed(Origin::Timeout, after + " (connecting)");
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0)
      return failed(err == ECONNREFUSED ? Origin::ConnectRefused : Origin::ConnectionReset, std::strerror(err));
  }
  int yes = 1;
  ::setsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  const std::string request = method + " " + path + " HTTP/1.1\r\nHost: " + server.host + ":" +
                              std::to_string(server.port) + "\r\nUser-Agent: cb-lab\r\nConnection: close\r\n\r\n";
  std::size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(s.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EAGAIN) {
      pollfd p{s.get(), POLLOUT, 0};
      if (::poll(&p, 1, ms_left(deadline)) <= 0) return failed(Origin::Timeout, after + " (sending)");
      continue;
    }
    return failed(Origin::ConnectionReset, std::string("sending: ") + std::strerror(errno));
  }
  // Read until the server closes (we asked it to) or the deadline; then judge what came.
  std::string in;
  char buf[8192];
  for (;;) {
    pollfd p{s.get(), POLLIN, 0};
    if (::poll(&p, 1, ms_left(deadline)) <= 0) {
      if (in.find("\r\n\r\n") != std::string::npos && status_of(in.substr(0, in.find("\r\n"))) > 0) break;
      return failed(Origin::Timeout, after);
    }
    const ssize_t n = ::recv(s.get(), buf, sizeof buf, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return failed(Origin::ConnectionReset, std::strerror(errno));
    }
    in.append(buf, static_cast<std::size_t>(n));
    if (in.size() > kMaxAnswer || answer_complete(in)) break;
  }
  if (in.empty()) return failed(Origin::ConnectionReset, "the server closed the connection without an answer");
  const auto eol = in.find("\r\n");
  const int status = status_of(in.substr(0, eol));
  if (status < 0) {
    std::string start = in.substr(0, std::min<std::size_t>(eol, 40));
    for (char& c : start)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    return failed(Origin::MalformedResponse, "not an HTTP answer: '" + start + "'");
  }
  HttpAnswer a;
  a.observation = {Origin::Response, status};
  if (const auto body = in.find("\r\n\r\n"); body != std::string::npos) a.body = in.substr(body + 4);
  a.detail = "HTTP " + std::to_string(status);
  return a;
}

}  // namespace

std::string ServerUrl::text() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<ServerUrl> parse_url(const std::string& url) {
  const std::string bad = "'" + url + "' is not a server URL like " + flaky::default_url();
  if (url.rfind("http://", 0) != 0) return Error{bad};
  std::string rest = url.substr(7);
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  ServerUrl out;
  std::string port;
  if (!rest.empty() && rest[0] == '[') {
    const auto close = rest.find(']');
    if (close == std::string::npos || close + 1 >= rest.size() || rest[close + 1] != ':') return Error{bad};
    out.host = rest.substr(1, close - 1);
    port = rest.substr(close + 2);
  } else {
    const auto colon = rest.rfind(':');
    if (colon == std::string::npos) return Error{bad};
    out.host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
  }
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), out.port);
  if (out.host.empty() || ec != std::errc{} || p != port.data() + port.size() || out.port < 1 || out.port > 65535)
    return Error{bad};
  return out;
}

std::optional<std::string> request_path_problem(std::string_view path) {
  if (path.empty() || path.front() != '/')
    return "expected a path that starts with '/', such as \"" + std::string(flaky::path::kFast) + "\"";
  if (path.size() > 2048) return "is " + std::to_string(path.size()) + " bytes; at most 2048";
  for (std::size_t i = 0; i < path.size(); ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    if (c <= 0x20 || c == 0x7f) {
      const char* what = c == '\r'   ? "a carriage return (CR)"
                         : c == '\n' ? "a line feed (LF)"
                         : c == ' '  ? "a space"
                                     : "a control character";
      return "has " + std::string(what) + " at byte " + std::to_string(i) +
             ", which would end the request line; write it percent-encoded (%20, %0D, %0A)";
    }
  }
  return std::nullopt;
}

HttpAnswer http_request(const ServerUrl& server, const std::string& method, const std::string& path,
                        std::chrono::milliseconds timeout) {
  const auto t0 = Clock::now();
  HttpAnswer a = attempt(server, method, path, timeout);
  a.elapsed = Clock::now() - t0;
  return a;
}

std::string outcome_word(const HttpAnswer& a) {
  switch (a.observation.origin) {
    case Origin::Response: return std::to_string(a.observation.status);
    case Origin::Timeout: return "timeout";
    case Origin::ConnectRefused: return "refused-conn";
    case Origin::ConnectionReset: return "reset";
    case Origin::MalformedResponse: return "garbage";
  }
  return "?";
}

}  // namespace cb::lab
