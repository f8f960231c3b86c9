#pragma once
// The breaker's configuration: small value types, one per concern, in the spirit of gRPC's
// BackOff options. Each named profile (profiles.h) is nothing but a filled-in BreakerOptions.
// A configuration is checked once by validate(); only a ValidOptions can build a breaker.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "cb/result.h"
#include "cb/breaker/time.h"

namespace cb {

struct WindowOptions {
  enum class Kind : std::uint8_t {
    Count,  // the last `size` recorded calls
    Time,   // the calls recorded in the last `size` seconds (one-second buckets)
  };
  Kind kind = Kind::Count;
  int size = 10;
  // A window holding fewer recorded calls is never judged: 1 failure out of 1 call is not a
  // 100% failure rate worth tripping on (the lab's first common mistake).
  int minimum_calls = 5;
};

// What opens a CLOSED breaker. Any rule that is set can trip it; at least one must be set.
struct TripOptions {
  // N failures in a row (a success in between starts again from 0). 0 = rule off.
  int consecutive_failures = 0;
  // Rates are percentages in (0, 100], compared with >=; std::nullopt = rule off.
  std::optional<double> failure_rate_percent;
  std::optional<double> slow_call_rate_percent;
  // A counted call is slow when it took strictly longer than this.
  Duration slow_call_duration{0};
  WindowOptions window;
};

// How long an OPEN breaker refuses before it lets trials through. The k-th consecutive failed
// trial (k = 0 for the trip out of CLOSED) waits min(base * multiplier^k, cap); jitter then
// lengthens it by up to jitter * that, never shortens it, because the configured cool-down is
// a promise of silence to the dependency.
struct CooldownOptions {
  Duration base{std::chrono::seconds{30}};
  double multiplier = 1.0;  // >= 1; 1 = a fixed cool-down
  Duration cap{0};          // required when multiplier > 1; >= base
  double jitter = 0.0;      // in [0, 1]; needs a RandomSource when > 0
};

struct HalfOpenOptions {
  enum class Decide : std::uint8_t {
    // Every outcome decides at once: any failure reopens, `successes_to_close` successes in a
    // row close (the balancer, the payments scene's one trial, the replay exercise's probe).
    EachOutcome,
    // Once `permitted_calls` trials have reported, their failure (or slow-call) rate is judged
    // against the trip thresholds: >= reopens, below closes (the lab's rule, as resilience4j).
    AfterAllTrials,
  };
  // Trials admitted in one HALF_OPEN period. 0 = every call passes (the balancer exercise).
  // Admitted means admitted, not in flight: the (n+1)-th call is refused even after the first
  // n have reported, until the breaker leaves HALF_OPEN. An Ignored trial gives its slot back.
  int permitted_calls = 3;
  Decide decide = Decide::AfterAllTrials;
  int successes_to_close = 1;  // EachOutcome only
  // A trial that never reports must not pin the breaker HALF_OPEN: once trials are outstanding
  // this long after the first was admitted, the breaker reopens as if a trial had failed.
  // 0 = wait forever.
  Duration max_wait{0};
};

struct BreakerOptions {
  std::string name;  // for messages and listeners only
  TripOptions trip;
  CooldownOptions cooldown;
  HalfOpenOptions half_open;
};

// A BreakerOptions that validate() accepted. The only way to build a CircuitBreaker.
class ValidOptions {
 public:
  [[nodiscard]] const BreakerOptions& get() const noexcept { return options_; }
  const BreakerOptions* operator->() const noexcept { return &options_; }

 private:
  friend Result<ValidOptions> validate(BreakerOptions options);
  explicit ValidOptions(BreakerOptions options) : options_(std::move(options)) {}
  BreakerOptions options_;
};

// Rejects any configuration that is meaningless or could never work, with an error naming the
// field: "trip.window.size: must be >= 1, got 0".
[[nodiscard]] Result<ValidOptions> validate(BreakerOptions options);

}  // namespace cb
