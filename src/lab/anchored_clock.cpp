#include "cb/lab/anchored_clock.h"

#include <string>

#include "cb/utc_time.h"

namespace cb::lab {
namespace {

std::int64_t wall_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

AnchoredClock::AnchoredClock() : steady0_(std::chrono::steady_clock::now()), lab0_us_(wall_now_us()) {}

void AnchoredClock::resume_from(TimePoint lab_time) noexcept {
  steady0_ = std::chrono::steady_clock::now();
  const std::int64_t wall = wall_now_us();
  lab0_us_ = lab_time.time_since_epoch().count();
  // Negative only if the wall clock was set back since; the stamps then follow the wall clock.
  wall_minus_lab_us_ = wall - lab0_us_;
}

TimePoint AnchoredClock::now() const noexcept {
  const auto since = std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now() - steady0_);
  return TimePoint{Duration{lab0_us_} + since};
}

TimePoint AnchoredClock::to_wall(TimePoint lab_time) const noexcept { return lab_time + Duration{wall_minus_lab_us_}; }

std::string iso8601_ms(TimePoint t) { return format_utc(t.time_since_epoch().count()); }
std::string iso8601_us(TimePoint t) { return format_utc(t.time_since_epoch().count(), 6); }

}  // namespace cb::lab
