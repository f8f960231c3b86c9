#include "cb/breaker/time.h"

#include <time.h>

#include <algorithm>

namespace cb {
namespace {

Duration from_timespec(const timespec& ts) { return Duration{ts.tv_sec * 1'000'000 + ts.tv_nsec / 1000}; }

}  // namespace

// The one place the engine library touches a real clock, and only because a caller chose
// SteadyClock as the Clock to inject.
TimePoint SteadyClock::now() const noexcept {
  return TimePoint{std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now().time_since_epoch())};
}

// steady_clock is CLOCK_MONOTONIC on Linux, and the coarse clock is its value at the last tick:
// one timeline, so the two readings compare.
TimePoint SteadyClock::coarse_now() const noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return TimePoint{from_timespec(ts)};
}

Duration SteadyClock::coarse_lag() const noexcept {
  timespec res{};
  clock_getres(CLOCK_MONOTONIC_COARSE, &res);
  return std::max(Duration{50'000}, 10 * from_timespec(res));
}

}  // namespace cb
