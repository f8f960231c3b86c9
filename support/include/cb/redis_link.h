#pragma once
// One blocking hiredis connection (the fleet's reporter's, the grader's queue's) with a bound on
// every wait. hiredis 0.14 (Debian 12) has no timeouts in its async API, so the reporter uses the
// blocking API on a connection of its own with redisSetTimeout: a send or receive that takes
// longer fails with an I/O error, and the connection is dropped (its replies would be out of
// step) and made again on the next command.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cb/result.h"

struct redisContext;

namespace cb {

struct RedisAddress {
  std::string host;  // empty for a unix socket
  int port = 0;
  std::string socket_path;
};
// redis://HOST:PORT (PORT 1-65535) or unix:///ABSOLUTE/PATH.
[[nodiscard]] Result<RedisAddress> parse_redis_address(std::string_view url);

struct RedisReply {
  enum class Kind : std::uint8_t { Nil, Integer, String, Array, Error, Status };
  Kind kind = Kind::Nil;
  long long integer = 0;
  std::string text;  // String, Error, Status
  std::vector<RedisReply> elements;
};

class RedisLink {
 public:
  RedisLink(RedisAddress address, std::chrono::microseconds timeout);
  ~RedisLink();
  RedisLink(const RedisLink&) = delete;
  RedisLink& operator=(const RedisLink&) = delete;

  // Connects first if it is not connected. An Error is the transport's (refused, timed out,
  // closed); what Redis answered, an error reply included, is a RedisReply.
  [[nodiscard]] Result<RedisReply> command(const std::vector<std::string>& argv);
  void disconnect() noexcept;

 private:
  [[nodiscard]] Result<void> connect();
  RedisAddress address_;
  std::chrono::microseconds timeout_;
  redisContext* c_ = nullptr;
};

}  // namespace cb
