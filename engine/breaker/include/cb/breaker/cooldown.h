#pragma once
// The cool-down as a pure value: given how many trials in a row have failed and a uniform
// random number, how long to stay OPEN. No clock, no state (gRPC's BackOff is the model).

#include <cstdint>

#include "cb/breaker/options.h"
#include "cb/breaker/time.h"

namespace cb {

class CooldownPolicy {
 public:
  explicit CooldownPolicy(const CooldownOptions& options) noexcept : o_(options) {}

  // failed_trials: 0 when tripping out of CLOSED, k after the k-th failed trial in a row.
  // unit: uniform in [0, 1); ignored when jitter is 0.
  [[nodiscard]] Duration duration(int failed_trials, double unit) const noexcept;

  [[nodiscard]] bool needs_random() const noexcept { return o_.jitter > 0.0; }

 private:
  CooldownOptions o_;
};

// Where jitter comes from. Injected, so a seeded source gives the same run every time.
// Called under the breaker's lock: one source per breaker, or a thread-safe one.
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  [[nodiscard]] virtual double next_unit() = 0;  // uniform in [0, 1)
};

// splitmix64: tiny, fast, and the same sequence on every platform for a given seed (unlike
// std::uniform_real_distribution, whose output the standard leaves to the implementation).
class SeededRandom final : public RandomSource {
 public:
  explicit SeededRandom(std::uint64_t seed) noexcept : state_(seed) {}
  [[nodiscard]] double next_unit() override;

 private:
  std::uint64_t state_;
};

}  // namespace cb
