#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "cb/breaker/state.h"
#include "cb/breaker/time.h"

namespace cb {

enum class Reason : std::uint8_t {
  ConsecutiveFailures,  // CLOSED -> OPEN
  FailureRate,          // CLOSED -> OPEN
  SlowCallRate,         // CLOSED -> OPEN
  CooldownElapsed,      // OPEN -> HALF_OPEN
  TrialFailed,          // HALF_OPEN -> OPEN (a trial failed, each outcome decides)
  TrialFailureRate,     // HALF_OPEN -> OPEN (the trials' failure rate reached the threshold)
  TrialSlowCallRate,    // HALF_OPEN -> OPEN
  HalfOpenTimeout,      // HALF_OPEN -> OPEN (trials outstanding past max_wait)
  TrialsSucceeded,      // HALF_OPEN -> CLOSED
  ForcedOpen,           // manual overrides and reset: any -> any
  ForcedClosed,
  Disabled,
  Reset,
};

[[nodiscard]] std::string_view to_string(Reason r) noexcept;
[[nodiscard]] std::optional<Reason> parse_reason(std::string_view text) noexcept;

struct Transition {
  State from = State::Closed;
  State to = State::Closed;
  // When the new state began. Lazy transitions carry the moment the rule fired, not the moment
  // someone noticed: a cool-down of 3 s that ended at 10:00:03 is HALF_OPEN from 10:00:03 even
  // if the next call comes at 10:00:09.
  TimePoint at{};
  Reason reason = Reason::CooldownElapsed;
  std::uint64_t generation = 0;  // of the new state

  friend bool operator==(const Transition&, const Transition&) = default;
};

// Called outside the breaker's lock, once per transition, in the order the transitions
// happened, never concurrently. A listener may call back into the breaker.
using TransitionListener = std::function<void(const Transition&)>;

}  // namespace cb
