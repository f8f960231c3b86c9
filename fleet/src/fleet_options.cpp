#include "cb/fleet/fleet_options.h"

#include <cstdio>

#include "name_chars.h"
#include "cb/redis_link.h"

namespace cb::fleet {
namespace {

long long whole_ms(Duration d) { return d.count() / 1000; }

Result<void> check_ms(const char* field, Duration d, Duration lo, Duration hi) {
  if (d < lo || d > hi || d.count() % 1000 != 0)
    return Error{std::string(field) + ": expected whole milliseconds from " + std::to_string(whole_ms(lo)) + " ms to " +
                 std::to_string(whole_ms(hi)) + " ms, got " + std::to_string(d.count()) + " us"};
  return {};
}

}  // namespace

Result<std::string> fleet_rules(const BreakerOptions& breaker, const FleetOptions& fleet) {
  auto valid = validate(breaker);
  if (!valid) return valid.error();
  // The name goes inside the keys' hash tag: a brace would end the tag, a space splits nothing
  // in RESP but would in every tool a person reads the keys with.
  if (fleet.name.empty() || fleet.name.size() > 100)
    return Error{"fleet.name: expected 1-100 characters, got " + std::to_string(fleet.name.size())};
  for (char ch : fleet.name)
    if (!name_char(ch))
      return Error{"fleet.name: expected letters, digits and _ - . : only, got \"" + fleet.name + "\""};
  if (fleet.instance.size() > 200) return Error{"fleet.instance: expected at most 200 characters"};
  for (char ch : fleet.instance)
    if (!name_char(ch))
      return Error{"fleet.instance: expected letters, digits and _ - . : only, got \"" + fleet.instance + "\""};
  const TripOptions& trip = breaker.trip;
  // A fleet's calls have no one order, so "N failures in a row" means nothing across it.
  if (trip.consecutive_failures > 0)
    return Error{"trip.consecutive_failures: a shared breaker judges rates over the fleet's window; set it to 0"};
  if (!trip.failure_rate_percent && !trip.slow_call_rate_percent)
    return Error{"trip: a shared breaker needs failure_rate_percent or slow_call_rate_percent"};
  if (breaker.half_open.permitted_calls < 1)
    return Error{"half_open.permitted_calls: a shared breaker leases 1 or more trials, got " +
                 std::to_string(breaker.half_open.permitted_calls)};
  if (auto r = check_ms("fleet.report_every", fleet.report_every, Duration{0}, std::chrono::minutes{1}); !r)
    return r.error();
  if (auto r = check_ms("fleet.redis_timeout", fleet.redis_timeout, 1ms, std::chrono::minutes{1}); !r) return r.error();
  if (auto r = check_ms("fleet.degrade_after", fleet.degrade_after, 1ms, std::chrono::hours{1}); !r) return r.error();
  if (auto r = check_ms("fleet.lease", fleet.lease, 1ms, std::chrono::hours{1}); !r) return r.error();
  if (auto r = check_ms("fleet.window", fleet.window, 1ms, std::chrono::hours{24}); !r) return r.error();
  if (auto r = check_ms("fleet.member_ttl", fleet.member_ttl, 1ms, std::chrono::hours{24}); !r) return r.error();
  if (fleet.buckets < 1 || fleet.buckets > 1000 || whole_ms(fleet.window) < fleet.buckets)
    return Error{"fleet.buckets: expected 1-1000 and at most one a millisecond of the window, got " +
                 std::to_string(fleet.buckets)};
  if (fleet.quorum < 1 || fleet.quorum > 10000)
    return Error{"fleet.quorum: expected 1-10000 instances, got " + std::to_string(fleet.quorum)};
  const CooldownOptions& cd = breaker.cooldown;
  if (cd.base < 1ms || (cd.cap > Duration{0} && cd.cap < 1ms))
    return Error{"cooldown.base: a shared breaker's cool-down is in whole milliseconds, at least 1 ms"};

  char text[512];
  std::snprintf(text, sizeof text, "%lld,%d,%d,%.17g,%.17g,%d,%lld,%.17g,%lld,%.17g,%d,%lld,%lld",
                whole_ms(fleet.window), fleet.buckets, trip.window.minimum_calls,
                trip.failure_rate_percent.value_or(0.0), trip.slow_call_rate_percent.value_or(0.0), fleet.quorum,
                whole_ms(cd.base), cd.multiplier, whole_ms(cd.cap), cd.jitter, breaker.half_open.permitted_calls,
                whole_ms(fleet.lease), whole_ms(fleet.member_ttl));
  return std::string(text);
}

Result<void> check_redis(const std::string& address, Duration timeout) {
  auto parsed = parse_redis_address(address);
  if (!parsed) return parsed.error();
  RedisLink link(*parsed, timeout);
  auto pong = link.command({"PING"});
  if (!pong) return Error{"cannot reach Redis at " + address + ": " + pong.error().message};
  if (pong->kind != RedisReply::Kind::Status || pong->text != "PONG")
    return Error{"Redis at " + address + " answered PING with " + (pong->text.empty() ? "nothing" : pong->text)};
  return {};
}

}  // namespace cb::fleet
