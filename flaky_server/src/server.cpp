#include "cb/flaky/server.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "http_server.h"

namespace cb::flaky {
namespace {

// httplib says only that binding failed; bind once more ourselves to learn why.
std::string why_bind_failed(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string where = "cannot listen on " + host + ":" + std::to_string(port) + ": ";
  if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
    return where + ::gai_strerror(rc);
  std::string reason = "unknown error";
  for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) {
      reason = std::strerror(errno);
      continue;
    }
    int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 1) != 0) reason = std::strerror(errno);
    ::close(fd);
  }
  ::freeaddrinfo(found);
  // Lower-case, as the rest of the line: "address already in use".
  if (!reason.empty()) reason[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(reason[0])));
  return where + reason;
}

}  // namespace

struct FlakyServer::Runner {
  explicit Runner(std::size_t capacity) : record(capacity) {}
  RequestRecord record;
  std::thread thread;
  std::mutex mu;
  bool stopped = false;
};

Result<std::unique_ptr<FlakyServer>> FlakyServer::start(const ServerOptions& options) {
  if (auto valid = validate(options); !valid) return valid.error();
  std::unique_ptr<FlakyServer> s(new FlakyServer());
  s->runner_ = std::make_unique<Runner>(options.record_capacity);
  s->http_ = std::make_unique<HttpServer>(options, s->runner_->record);
  const int port = options.port == 0 ? s->http_->bind_to_any_port(options.host)
                                     : (s->http_->bind_to_port(options.host, options.port) ? options.port : -1);
  if (port <= 0) return Error{why_bind_failed(options.host, options.port)};
  s->http_->widen_backlog();
  s->port_ = port;
  s->host_ = options.host;
  // The socket listens from bind on; connections made before this thread runs wait in the
  // backlog, so there is nothing to wait for here.
  s->runner_->thread = std::thread([http = s->http_.get()] { http->listen_after_bind(); });
  return s;
}

FlakyServer::~FlakyServer() { stop(); }

void FlakyServer::stop() {
  if (!runner_) return;
  std::lock_guard lock(runner_->mu);
  if (runner_->stopped) return;
  runner_->stopped = true;
  http_->begin_stop();
  if (runner_->thread.joinable()) runner_->thread.join();
}

std::string FlakyServer::url() const {
  const bool v6 = host_.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host_ + "]" : host_) + ":" + std::to_string(port_);
}

RequestRecord& FlakyServer::record() noexcept { return runner_->record; }

}  // namespace cb::flaky
