#include "cb/lab/anchored_clock.h"

#include <cstdio>
#include <ctime>
#include <string>

namespace cb::lab {

AnchoredClock::AnchoredClock()
    : steady0_(std::chrono::steady_clock::now()),
      wall0_us_(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
                    .count()) {}

TimePoint AnchoredClock::now() const noexcept {
  const auto since = std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - steady0_);
  return TimePoint{Duration{wall0_us_} + since};
}

std::string iso8601_ms(TimePoint t) {
  const auto us = t.time_since_epoch().count();
  // Floor, not truncation toward zero, so the times before 1970 that tests use come out right.
  const auto secs = us >= 0 ? us / 1'000'000 : -((-us + 999'999) / 1'000'000);
  const auto ms = (us - secs * 1'000'000) / 1000;
  const std::time_t tt = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

}  // namespace cb::lab
