#include "cb/flaky/http_get.h"
#include "cb/flaky/endpoints.h"
#include "cb/owned_fd.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace cb::flaky {
namespace {

using Clock = std::chrono::steady_clock;

int millis_left(Clock::time_point until) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
  return static_cast<int>(std::max<long long>(left, 0));
}

bool iequal_prefix(std::string_view line, std::string_view name) {
  if (line.size() < name.size()) return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    if ((line[i] | 0x20) != (name[i] | 0x20)) return false;
  return true;
}

}  // namespace

Result<GetAnswer> http_get(const std::string& url, const std::string& target, std::chrono::milliseconds timeout,
                           const std::vector<std::pair<std::string, std::string>>& headers, std::size_t max_body) {
  const std::string not_url = "'" + url + "' is not a server URL like " + default_url();
  std::string_view rest = url;
  if (rest.rfind("http://", 0) != 0) return Error{not_url};
  rest.remove_prefix(7);
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  std::string host;
  std::string port;
  if (!rest.empty() && rest.front() == '[') {  // [::1]:8110
    const auto close = rest.find(']');
    if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':') return Error{not_url};
    host = std::string(rest.substr(1, close - 1));
    port = std::string(rest.substr(close + 2));
  } else {
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos) return Error{not_url};
    host = std::string(rest.substr(0, colon));
    port = std::string(rest.substr(colon + 1));
  }
  if (host.empty() || port.empty() ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return Error{not_url};

  const std::string none = "no flaky server answers at " + url;
  const auto until = Clock::now() + timeout;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  // "localhost" by hand, so a statically linked grader needs no resolver (NSS) for it.
  if (const int rc = ::getaddrinfo(host == "localhost" ? "127.0.0.1" : host.c_str(), port.c_str(), &hints, &found);
      rc != 0)
    return Error{none + " (" + ::gai_strerror(rc) + ")"};
  const OwnedFd sock(::socket(found->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  int rc = sock.get() < 0 ? -1 : ::connect(sock.get(), found->ai_addr, found->ai_addrlen);
  ::freeaddrinfo(found);
  if (rc != 0 && errno != EINPROGRESS) return Error{none + " (" + std::strerror(errno) + ")"};
  if (rc != 0) {
    pollfd p{sock.get(), POLLOUT, 0};
    if (::poll(&p, 1, millis_left(until)) != 1) return Error{none + " (no connection within the time limit)"};
    int error = 0;
    socklen_t len = sizeof error;
    ::getsockopt(sock.get(), SOL_SOCKET, SO_ERROR, &error, &len);
    if (error != 0) return Error{none + " (" + std::strerror(error) + ")"};
  }
  std::string request = "GET " + target + " HTTP/1.1\r\nHost: " + host + ":" + port + "\r\nConnection: close\r\n";
  for (const auto& [k, v] : headers) request += k + ": " + v + "\r\n";
  request += "\r\n";
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(sock.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    pollfd p{sock.get(), POLLOUT, 0};
    if (n < 0 && errno == EAGAIN && ::poll(&p, 1, millis_left(until)) == 1) continue;
    return Error{none + " (the request could not be sent: " + std::strerror(errno) + ")"};
  }

  // The answer: until the body is whole by Content-Length, or the server closes.
  std::string raw;
  std::size_t head_end = std::string::npos;
  std::size_t want = std::string::npos;
  char buf[65536];
  for (;;) {
    if (head_end != std::string::npos && want != std::string::npos && raw.size() - head_end >= want) break;
    pollfd p{sock.get(), POLLIN, 0};
    if (::poll(&p, 1, millis_left(until)) != 1) return Error{none + " (no whole answer within the time limit)"};
    const ssize_t n = ::recv(sock.get(), buf, sizeof buf, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return Error{none + " (" + std::strerror(errno) + ")"};
    if (n == 0) break;
    raw.append(buf, static_cast<std::size_t>(n));
    const std::string too_large = url + target + ": the answer is larger than " + std::to_string(max_body) + " bytes";
    if (head_end != std::string::npos && raw.size() - head_end > max_body) return Error{too_large};
    if (head_end == std::string::npos) {
      const auto blank = raw.find("\r\n\r\n");
      if (blank == std::string::npos) {
        if (raw.size() > 64 * 1024) return Error{url + " answered something that is not HTTP"};
        continue;
      }
      head_end = blank + 4;
      std::string_view head(raw.data(), blank);
      for (auto at = head.find("\r\n"); at != std::string_view::npos; at = head.find("\r\n", at + 2)) {
        const std::string_view line = head.substr(at + 2, head.find("\r\n", at + 2) - (at + 2));
        if (!iequal_prefix(line, "content-length:")) continue;
        std::string_view v = line.substr(15);
        while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
        std::size_t length = 0;
        if (std::from_chars(v.data(), v.data() + v.size(), length).ec == std::errc{}) want = length;
      }
      if ((want != std::string::npos && want > max_body) || raw.size() - head_end > max_body) return Error{too_large};
    }
  }
  GetAnswer out;
  if (raw.rfind("HTTP/1.", 0) != 0 || raw.size() < 12 || head_end == std::string::npos)
    return Error{url + " answered something that is not HTTP"};
  if (std::from_chars(raw.data() + 9, raw.data() + 12, out.status).ec != std::errc{})
    return Error{url + " answered something that is not HTTP"};
  if (want != std::string::npos && raw.size() - head_end < want) return Error{none + " (the answer was cut short)"};
  out.body = raw.substr(head_end, want == std::string::npos ? std::string::npos : want);
  return out;
}

}  // namespace cb::flaky
