#include <arpa/inet.h>

#include <cstring>
#include <string>
#include <utility>

#include "cb/flaky/options.h"

namespace cb::flaky {

bool is_loopback(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24U) == 127U;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return std::memcmp(&v6, &in6addr_loopback, sizeof v6) == 0;
  return false;
}

Result<void> validate(const ServerOptions& o) {
  if (o.host.empty()) return Error{"--host: must not be empty"};
  if (!o.allow_remote && !is_loopback(o.host))
    return Error{"--host: " + o.host +
                 " is not a loopback address; the flaky server answers anyone who reaches it, so binding "
                 "beyond this machine needs --allow-remote"};
  if (o.port < 0 || o.port > 65535) return Error{"--port: must be between 0 and 65535, got " + std::to_string(o.port)};
  if (o.toggle_period <= 0s) return Error{"--toggle-period: must be > 0"};
  if (o.slow_default < 0s) return Error{"--slow-default: must be >= 0"};
  if (o.hang_limit <= 0s) return Error{"--hang-limit: must be > 0"};
  if (o.answer_floor < 0s || o.answer_floor > 1s) return Error{"--answer-floor: must be between 0 and 1s"};
  // A day at most: a time point plus 2600000h overflows the clock's nanoseconds, and /slow then
  // answered at once.
  for (const auto& [flag, d] : {std::pair{"--toggle-period", o.toggle_period},
                                std::pair{"--slow-default", o.slow_default}, std::pair{"--hang-limit", o.hang_limit}})
    if (d > std::chrono::hours{24})
      return Error{std::string(flag) + ": must be at most 24h, got " +
                   std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + " s"};
  if (o.record_capacity < 1 || o.record_capacity > 10'000'000)
    return Error{"--record-size: must be between 1 and 10000000, got " + std::to_string(o.record_capacity)};
  if (o.threads < 1 || o.threads > 64)
    return Error{"--threads: must be between 1 and 64, got " + std::to_string(o.threads)};
  if (o.max_connections < 1 || o.max_connections > 1'000'000)
    return Error{"--max-connections: must be between 1 and 1000000, got " + std::to_string(o.max_connections)};
  if (o.request_timeout <= 0s) return Error{"--request-timeout: must be > 0"};
  if (o.keep_alive_timeout <= 0s) return Error{"--keep-alive-timeout: must be > 0"};
  if (o.max_request_bytes < 1024) return Error{"--max-request-bytes: must be >= 1024"};
  return {};
}

}  // namespace cb::flaky
