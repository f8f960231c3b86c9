#include "cb/breaker/cooldown.h"

#include <algorithm>
#include <cmath>

namespace cb {

Duration CooldownPolicy::duration(int failed_trials, double unit) const noexcept {
  // Grown in double and clamped before converting back: 30 s * 2^60 would overflow an int64 of
  // microseconds, and the cap is what a growing cool-down is for.
  double us = static_cast<double>(o_.base.count());
  if (o_.multiplier > 1.0 && failed_trials > 0) {
    us *= std::pow(o_.multiplier, failed_trials);
    us = std::min(us, static_cast<double>(o_.cap.count()));
  }
  if (o_.jitter > 0.0) {
    // Worked example: base 30 s, jitter 0.2, unit 0.5 -> 30 s + 30 s * 0.2 * 0.5 = 33 s.
    us += us * o_.jitter * std::clamp(unit, 0.0, 1.0);
  }
  return Duration{static_cast<Duration::rep>(std::llround(us))};
}

double SeededRandom::next_unit() {
  // splitmix64 (Steele, Lea, Flood 2014), then the top 53 bits as a double in [0, 1).
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  z ^= z >> 31U;
  return static_cast<double>(z >> 11U) * 0x1.0p-53;
}

}  // namespace cb
