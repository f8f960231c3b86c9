// Each exercise's breaker as data. docs/ENGINE.md has the table of what each reproduces.
#include "cb/breaker/profiles.h"

#include <array>
#include <string>

namespace cb::profiles {
namespace {

using std::chrono::seconds;

// Long enough for any honest trial (the lab's slow-call line is 3 s), short enough that a trial
// whose caller vanished does not pin the breaker HALF_OPEN for good.
constexpr Duration kMaxWaitInHalfOpen = seconds{60};

BreakerOptions rate_based(std::string name, double failure_rate_percent, Duration wait_in_open) {
  BreakerOptions o;
  o.name = std::move(name);
  o.trip.window = {WindowOptions::Kind::Count, 10, 5};
  o.trip.failure_rate_percent = failure_rate_percent;
  o.trip.slow_call_rate_percent = 100.0;
  o.trip.slow_call_duration = seconds{3};
  o.cooldown.base = wait_in_open;
  o.half_open.permitted_calls = 3;
  o.half_open.decide = HalfOpenOptions::Decide::AfterAllTrials;
  o.half_open.max_wait = kMaxWaitInHalfOpen;
  return o;
}

BreakerOptions consecutive(std::string name, int threshold, Duration cooldown, int permitted_trials,
                           int successes_to_close) {
  BreakerOptions o;
  o.name = std::move(name);
  o.trip.consecutive_failures = threshold;
  // The window is unused by a consecutive rule; it stays minimal.
  o.trip.window = {WindowOptions::Kind::Count, 1, 1};
  o.cooldown.base = cooldown;
  o.half_open.permitted_calls = permitted_trials;
  o.half_open.decide = HalfOpenOptions::Decide::EachOutcome;
  o.half_open.successes_to_close = successes_to_close;
  o.half_open.max_wait = kMaxWaitInHalfOpen;
  return o;
}

constexpr std::array<std::string_view, 6> kNames{"lab", "payment", "notifications", "balancer", "probe", "lesson"};

}  // namespace

BreakerOptions lab(Duration wait_in_open) { return rate_based("lab", 50.0, wait_in_open); }
BreakerOptions payment(Duration wait_in_open) { return rate_based("payment", 35.0, wait_in_open); }
BreakerOptions notifications(Duration wait_in_open) { return rate_based("notifications", 65.0, wait_in_open); }
BreakerOptions balancer() { return consecutive("balancer", 5, seconds{30}, 0, 3); }
BreakerOptions probe(int threshold, Duration cooldown) { return consecutive("probe", threshold, cooldown, 1, 1); }
BreakerOptions lesson() { return consecutive("lesson", 3, seconds{10}, 1, 1); }

std::span<const std::string_view> names() noexcept { return kNames; }

Result<BreakerOptions> by_name(std::string_view name) {
  if (name == "lab") return lab();
  if (name == "payment") return payment();
  if (name == "notifications") return notifications();
  if (name == "balancer") return balancer();
  if (name == "probe") return probe(2, seconds{10});
  if (name == "lesson") return lesson();
  std::string known;
  for (auto n : kNames) known += (known.empty() ? "" : ", ") + std::string(n);
  return Error{"profile: unknown name '" + std::string(name) + "' (known: " + known + ")"};
}

}  // namespace cb::profiles
