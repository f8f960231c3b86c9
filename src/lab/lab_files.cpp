#include "cb/lab/lab_files.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cb/lab/anchored_clock.h"

namespace cb::lab {

std::string state_file(const Status& status, const BreakerOptions& options, TimePoint now) {
  const Metrics& m = status.metrics;
  const bool half_open = status.state == State::HalfOpen;
  nlohmann::ordered_json j;
  j["state"] = std::string(to_string(status.state));
  j["failures"] = half_open ? m.trial_failures : static_cast<int>(m.window.failures);
  j["window_size"] = options.trip.window.size;
  j["permitted_in_half_open"] = options.half_open.permitted_calls;
  j["calls"] = half_open ? m.trial_successes + m.trial_failures : static_cast<int>(m.window.calls);
  if (m.failure_rate_percent) {
    j["failure_rate"] = std::round(*m.failure_rate_percent * 100.0) / 100.0;
  } else {
    j["failure_rate"] = nullptr;  // under the minimum: not judged
  }
  j["minimum_calls"] = options.trip.window.minimum_calls;
  j["wait_in_open_ms"] = options.cooldown.base.count() / 1000;
  if (half_open) j["trials_admitted"] = m.trials_admitted;
  if (status.open_remaining) j["open_remaining_ms"] = status.open_remaining->count() / 1000;
  j["updated_at"] = iso8601_ms(now);
  return j.dump(2) + "\n";
}

std::string fastfail_file(long long before, long long after, long long blocked, double max_ms) {
  char ms[64];
  // Enough digits that a sub-microsecond refusal does not print as 0.
  std::snprintf(ms, sizeof ms, "%.4f", max_ms);
  return "before=" + std::to_string(before) + " after=" + std::to_string(after) +
         " blocked=" + std::to_string(blocked) + " max_ms=" + ms + "\n";
}

std::string transitions_file(const std::vector<Transition>& transitions) {
  std::string out;
  for (const Transition& t : transitions)
    out += iso8601_us(t.at) + " " + std::string(to_string(t.from)) + "->" + std::string(to_string(t.to)) + "\n";
  return out;
}

}  // namespace cb::lab
