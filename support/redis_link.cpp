#include "cb/redis_link.h"

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <charconv>

namespace cb {

Result<RedisAddress> parse_redis_address(std::string_view url) {
  RedisAddress a;
  if (url.starts_with("unix://")) {
    a.socket_path = std::string(url.substr(7));
    if (a.socket_path.empty() || a.socket_path.front() != '/')
      return Error{"address: expected unix:///ABSOLUTE/PATH, got " + std::string(url)};
    return a;
  }
  if (!url.starts_with("redis://"))
    return Error{"address: expected redis://HOST:PORT or unix:///PATH, got " + std::string(url)};
  std::string_view rest = url.substr(8);
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    return Error{"address: expected redis://HOST:PORT, got " + std::string(url)};
  a.host = std::string(rest.substr(0, colon));
  const std::string_view port = rest.substr(colon + 1);
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
  if (ec != std::errc{} || end != port.data() + port.size() || a.port < 1 || a.port > 65535)
    return Error{"address: the port must be 1-65535, got " + std::string(port)};
  return a;
}

namespace {

timeval to_timeval(std::chrono::microseconds d) {
  return timeval{static_cast<time_t>(d.count() / 1'000'000), static_cast<suseconds_t>(d.count() % 1'000'000)};
}

// NOLINTNEXTLINE(misc-no-recursion): a reply nests as deep as Redis made it (ours: two levels)
RedisReply convert(const redisReply& r) {
  RedisReply out;
  switch (r.type) {
    case REDIS_REPLY_INTEGER:
      out.kind = RedisReply::Kind::Integer;
      out.integer = r.integer;
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_ERROR:
    case REDIS_REPLY_STATUS:
      out.kind = r.type == REDIS_REPLY_STRING  ? RedisReply::Kind::String
                 : r.type == REDIS_REPLY_ERROR ? RedisReply::Kind::Error
                                               : RedisReply::Kind::Status;
      out.text.assign(r.str, r.len);
      break;
    case REDIS_REPLY_ARRAY:
      out.kind = RedisReply::Kind::Array;
      out.elements.reserve(r.elements);
      for (std::size_t i = 0; i < r.elements; ++i) out.elements.push_back(convert(*r.element[i]));
      break;
    default: break;
  }
  return out;
}

// hiredis writes with plain write(): to a Redis that died, that raises SIGPIPE, whose default
// is to end the whole program. The signal goes to the thread that wrote, so for the length of
// one command this thread blocks it, and takes back one it caused before unblocking (the
// program's own SIGPIPE handling, if any, is left as it was).
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    already_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeBlocked() {
    if (!already_pending_) {
      const timespec zero{};
      while (sigtimedwait(&pipe_, nullptr, &zero) > 0) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool already_pending_ = false;
};

}  // namespace

RedisLink::RedisLink(RedisAddress address, std::chrono::microseconds timeout)
    : address_(std::move(address)), timeout_(timeout) {}

RedisLink::~RedisLink() { disconnect(); }

void RedisLink::disconnect() noexcept {
  if (c_ != nullptr) redisFree(c_);
  c_ = nullptr;
}

Result<void> RedisLink::connect() {
  const timeval tv = to_timeval(timeout_);
  c_ = address_.socket_path.empty() ? redisConnectWithTimeout(address_.host.c_str(), address_.port, tv)
                                    : redisConnectUnixWithTimeout(address_.socket_path.c_str(), tv);
  if (c_ == nullptr) return Error{"redis: cannot allocate a connection"};
  if (c_->err != 0) {
    std::string why = c_->errstr;
    disconnect();
    return Error{"redis: connect: " + why};
  }
  if (redisSetTimeout(c_, tv) != REDIS_OK) {
    disconnect();
    return Error{"redis: cannot set the socket timeouts"};
  }
  return {};
}

Result<RedisReply> RedisLink::command(const std::vector<std::string>& argv) {
  const SigpipeBlocked no_sigpipe;
  if (c_ == nullptr) {
    if (auto connected = connect(); !connected) return connected.error();
  }
  std::vector<const char*> args;
  std::vector<std::size_t> lengths;
  args.reserve(argv.size());
  lengths.reserve(argv.size());
  for (const std::string& a : argv) {
    args.push_back(a.c_str());
    lengths.push_back(a.size());
  }
  auto* reply =
      static_cast<redisReply*>(redisCommandArgv(c_, static_cast<int>(args.size()), args.data(), lengths.data()));
  if (reply == nullptr) {
    // A timeout or a closed socket: whatever arrives later on this connection would answer
    // this command, not the next one, so the connection goes.
    std::string why = c_->errstr;
    disconnect();
    return Error{"redis: " + why};
  }
  RedisReply out = convert(*reply);
  freeReplyObject(reply);
  return out;
}

}  // namespace cb
