// Every rule a configuration must obey, each with the field it names.
#include <cmath>
#include <cstdio>
#include <string>

#include "cb/breaker/options.h"

namespace cb {
namespace {

// Large enough for any real window, small enough that a typo cannot allocate gigabytes.
constexpr int kMaxWindow = 100'000;
constexpr int kMaxTrials = 1'000'000;

std::string number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", x);
  return buf;
}

std::string seconds(Duration d) { return number(static_cast<double>(d.count()) / 1e6) + " s"; }

Error field_error(const char* field, const std::string& rule, const std::string& got) {
  return Error{std::string(field) + ": " + rule + ", got " + got};
}

bool valid_percent(const std::optional<double>& p) { return !p || (std::isfinite(*p) && *p > 0.0 && *p <= 100.0); }

Result<void> check_trip(const TripOptions& t) {
  const auto& w = t.window;
  if (w.size < 1 || w.size > kMaxWindow)
    return field_error("trip.window.size", "must be between 1 and " + std::to_string(kMaxWindow),
                       std::to_string(w.size));
  if (w.minimum_calls < 1)
    return field_error("trip.window.minimum_calls", "must be >= 1", std::to_string(w.minimum_calls));
  if (w.kind == WindowOptions::Kind::Count && w.minimum_calls > w.size)
    return field_error("trip.window.minimum_calls",
                       "must be <= trip.window.size (" + std::to_string(w.size) +
                           ") for a count window, which never holds more calls than its size",
                       std::to_string(w.minimum_calls));
  if (t.consecutive_failures < 0)
    return field_error("trip.consecutive_failures", "must be >= 0 (0 turns the rule off)",
                       std::to_string(t.consecutive_failures));
  if (!valid_percent(t.failure_rate_percent))
    return field_error("trip.failure_rate_percent", "must be in (0, 100]", number(*t.failure_rate_percent));
  if (!valid_percent(t.slow_call_rate_percent))
    return field_error("trip.slow_call_rate_percent", "must be in (0, 100]", number(*t.slow_call_rate_percent));
  if (t.slow_call_duration < Duration::zero())
    return field_error("trip.slow_call_duration", "must be >= 0", seconds(t.slow_call_duration));
  if (t.slow_call_rate_percent && t.slow_call_duration <= Duration::zero())
    return field_error("trip.slow_call_duration", "must be > 0 when trip.slow_call_rate_percent is set",
                       seconds(t.slow_call_duration));
  if (t.consecutive_failures == 0 && !t.failure_rate_percent && !t.slow_call_rate_percent)
    return Error{
        "trip: no rule is set (consecutive_failures, failure_rate_percent or slow_call_rate_percent), "
        "so the breaker could never open; use Mode::ForcedClosed for that"};
  return {};
}

Result<void> check_cooldown(const CooldownOptions& c) {
  if (c.base < Duration::zero()) return field_error("cooldown.base", "must be >= 0", seconds(c.base));
  if (!std::isfinite(c.multiplier) || c.multiplier < 1.0)
    return field_error("cooldown.multiplier", "must be >= 1 (1 keeps the cool-down fixed)", number(c.multiplier));
  if (c.cap < Duration::zero()) return field_error("cooldown.cap", "must be >= 0", seconds(c.cap));
  if (c.multiplier > 1.0 && c.cap <= Duration::zero())
    return field_error("cooldown.cap", "must be > 0 when cooldown.multiplier > 1, or the cool-down grows without bound",
                       seconds(c.cap));
  if (c.cap > Duration::zero() && c.cap < c.base)
    return field_error("cooldown.cap", "must be >= cooldown.base (" + seconds(c.base) + ")", seconds(c.cap));
  if (!std::isfinite(c.jitter) || c.jitter < 0.0 || c.jitter > 1.0)
    return field_error("cooldown.jitter", "must be in [0, 1]", number(c.jitter));
  return {};
}

Result<void> check_half_open(const HalfOpenOptions& h, const TripOptions& t) {
  if (h.permitted_calls < 0 || h.permitted_calls > kMaxTrials)
    return field_error("half_open.permitted_calls",
                       "must be between 0 (every call passes) and " + std::to_string(kMaxTrials),
                       std::to_string(h.permitted_calls));
  if (h.max_wait < Duration::zero())
    return field_error("half_open.max_wait", "must be >= 0 (0 waits forever)", seconds(h.max_wait));
  switch (h.decide) {
    case HalfOpenOptions::Decide::EachOutcome:
      if (h.successes_to_close < 1)
        return field_error("half_open.successes_to_close", "must be >= 1", std::to_string(h.successes_to_close));
      if (h.permitted_calls > 0 && h.successes_to_close > h.permitted_calls)
        return field_error("half_open.successes_to_close",
                           "must be <= half_open.permitted_calls (" + std::to_string(h.permitted_calls) +
                               "), or the trials could never close the breaker",
                           std::to_string(h.successes_to_close));
      break;
    case HalfOpenOptions::Decide::AfterAllTrials:
      if (h.permitted_calls < 1)
        return field_error("half_open.permitted_calls",
                           "must be >= 1 when trials are judged together (half_open.decide = after-all-trials)",
                           std::to_string(h.permitted_calls));
      if (!t.failure_rate_percent && !t.slow_call_rate_percent)
        return Error{
            "half_open.decide: after-all-trials judges the trials by trip.failure_rate_percent or "
            "trip.slow_call_rate_percent, and neither is set"};
      break;
  }
  return {};
}

}  // namespace

Result<ValidOptions> validate(BreakerOptions options) {
  if (auto r = check_trip(options.trip); !r) return r.error();
  if (auto r = check_cooldown(options.cooldown); !r) return r.error();
  if (auto r = check_half_open(options.half_open, options.trip); !r) return r.error();
  return ValidOptions{std::move(options)};
}

}  // namespace cb
