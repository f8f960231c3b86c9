#pragma once
// The lab's clock: monotonic like steady_clock, but on a timeline of microseconds since the Unix
// epoch, anchored once to the wall clock when it is made. So the engine's times can be written
// to transitions.log and saved for the next `cb-lab step` as wall-clock times with no
// conversion, and a later process, anchored afresh, continues the same timeline (to within the
// two anchors' reading, microseconds).

#include <chrono>

#include "cb/breaker/time.h"

namespace cb::lab {

class AnchoredClock final : public Clock {
 public:
  AnchoredClock();
  [[nodiscard]] TimePoint now() const noexcept override;

 private:
  std::chrono::steady_clock::time_point steady0_;
  std::int64_t wall0_us_;
};

// 2026-01-01T10:00:03.012Z: milliseconds, UTC, as transitions.log and the lab files carry them.
[[nodiscard]] std::string iso8601_ms(TimePoint t);

}  // namespace cb::lab
