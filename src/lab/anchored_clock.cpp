#include "cb/lab/anchored_clock.h"

#include <string>

#include "cb/utc_time.h"

namespace cb::lab {

AnchoredClock::AnchoredClock()
    : steady0_(std::chrono::steady_clock::now()),
      wall0_us_(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
                    .count()) {}

TimePoint AnchoredClock::now() const noexcept {
  const auto since = std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - steady0_);
  return TimePoint{Duration{wall0_us_} + since};
}

std::string iso8601_ms(TimePoint t) { return format_utc(t.time_since_epoch().count()); }

}  // namespace cb::lab
