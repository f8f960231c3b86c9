#include "cb/breaker/time.h"

namespace cb {

// The one place the engine library touches a real clock, and only because a caller chose
// SteadyClock as the Clock to inject.
TimePoint SteadyClock::now() const noexcept {
  return TimePoint{std::chrono::duration_cast<Duration>(std::chrono::steady_clock::now().time_since_epoch())};
}

}  // namespace cb
