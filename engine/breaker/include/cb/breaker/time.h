#pragma once
// The engine's notion of time. The breaker never reads a real clock on its own: it is handed a
// Clock, and reads it only when a rule needs the time (see state_machine.cpp). Tests, the seed
// replays and the scenes hand it a ManualClock; live programs hand it a SteadyClock.

#include <atomic>
#include <chrono>
#include <cstdint>

namespace cb {

// Microseconds are the finest unit any exercise asks for (the replay exercise compares times to the
// microsecond) and an int64 of them spans ~292,000 years, so no overflow in practice.
using Duration = std::chrono::microseconds;

// A tag clock: time points on the engine's own timeline. Which instant is zero is up to the
// Clock implementation (boot for SteadyClock, whatever the script says for ManualClock).
struct Timeline {
  using rep = Duration::rep;
  using period = Duration::period;
  using duration = Duration;
  using time_point = std::chrono::time_point<Timeline, Duration>;
  static constexpr bool is_steady = true;
};
using TimePoint = Timeline::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  [[nodiscard]] virtual TimePoint now() const noexcept = 0;
  // A cheaper reading that is never later than now() and at most coarse_lag() earlier. The
  // breaker uses it for one thing: refusing a call that comes well before its cool-down ends
  // (if coarse_now() + coarse_lag() is still before the end, so is now()); near the end it reads
  // now(), so the boundary stays exact. By default it is now() itself, with no lag.
  [[nodiscard]] virtual TimePoint coarse_now() const noexcept { return now(); }
  [[nodiscard]] virtual Duration coarse_lag() const noexcept { return Duration::zero(); }
};

// std::chrono::steady_clock, truncated to microseconds. Its coarse reading is the kernel's
// CLOCK_MONOTONIC_COARSE: the same timeline as of the last timer tick, a quarter of the cost of a
// precise read on this project's VM (~7 ns against ~27 ns).
class SteadyClock final : public Clock {
 public:
  [[nodiscard]] TimePoint now() const noexcept override;
  [[nodiscard]] TimePoint coarse_now() const noexcept override;
  // 50 ms, or ten ticks if a tick is longer: the coarse clock trails by up to one tick (1-10 ms
  // by kernel configuration) plus however late the tick ran; 50 ms leaves room for a tick
  // delayed by a busy host, and refusals in the last 50 ms of a cool-down read the precise clock.
  [[nodiscard]] Duration coarse_lag() const noexcept override;
};

// A clock that only moves when told to. Thread-safe, so a test can move time while other
// threads call through a breaker.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = TimePoint{}) noexcept : now_(start.time_since_epoch().count()) {}
  [[nodiscard]] TimePoint now() const noexcept override {
    return TimePoint{Duration{now_.load(std::memory_order_acquire)}};
  }
  void set(TimePoint t) noexcept { now_.store(t.time_since_epoch().count(), std::memory_order_release); }
  void advance(Duration d) noexcept { now_.fetch_add(d.count(), std::memory_order_acq_rel); }

 private:
  std::atomic<Duration::rep> now_;
};

}  // namespace cb
