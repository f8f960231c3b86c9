#pragma once
// The named profiles: each exercise's breaker, exactly, as a BreakerOptions. See docs/ENGINE.md for
// the table of what each one reproduces.

#include <span>
#include <string_view>

#include "cb/breaker/options.h"
#include "cb/result.h"

namespace cb::profiles {

// The lab: failure rate >= 50% over the last 10 calls, judged from 5 calls; slow-call rate
// >= 100% with slow = over 3 s; 3 trials judged together. 30 s in OPEN (the lab uses 3 s).
[[nodiscard]] BreakerOptions lab(Duration wait_in_open = std::chrono::seconds{30});
// The lab's per-service notes: the lab's rules with a 35% / 65% failure-rate threshold.
[[nodiscard]] BreakerOptions payment(Duration wait_in_open = std::chrono::seconds{30});
[[nodiscard]] BreakerOptions notifications(Duration wait_in_open = std::chrono::seconds{30});
// The balancer: 5 errors in a row; 30 s; in HALF_OPEN every call passes, 3 successes in a row close
// and any error reopens.
[[nodiscard]] BreakerOptions balancer();
// The replay exercise's probe: `threshold` failures in a row; `cooldown`; exactly one probe decides.
[[nodiscard]] BreakerOptions probe(int threshold, Duration cooldown);
// The payments story: 3 failures in a row; 10 s; exactly one trial, the others refused while it is out.
[[nodiscard]] BreakerOptions lesson();

// Every profile by name ("probe" with its exercise's first example: threshold 2, cool-down 10 s).
[[nodiscard]] std::span<const std::string_view> names() noexcept;
[[nodiscard]] Result<BreakerOptions> by_name(std::string_view name);

}  // namespace cb::profiles
