#pragma once
// The breaker every process of `scene fleet --shared` runs, shared or its own: the scene's
// cool-down and trials, judged as a fleet can judge them. A shared breaker has no one order of
// calls, so the scene's "3 failures in a row" becomes "half of at least 3 calls in the last
// 10 s"; any failed trial reopens and `permits` successes close, as the fleet's function does.

#include "cb/breaker/options.h"

namespace cb::cli {

inline BreakerOptions fleet_scene_rules(Duration cooldown, int permits, double jitter) {
  BreakerOptions o;
  o.name = "checkout";
  o.trip.failure_rate_percent = 50.0;
  o.trip.window = {WindowOptions::Kind::Time, 10, 3};
  o.cooldown.base = cooldown;
  o.cooldown.jitter = jitter;
  o.half_open.permitted_calls = permits;
  o.half_open.decide = HalfOpenOptions::Decide::EachOutcome;
  o.half_open.successes_to_close = permits;
  return o;
}

}  // namespace cb::cli
