#pragma once
// Seconds written as decimals ("0.1", "9.999", "1e-3", "30"), read exactly to the microsecond.
// Seed 004 compares times as decimals: 0.1 + 0.2 must be 0.3, which a double cannot promise.

#include <string>
#include <string_view>

#include "cb/breaker/result.h"
#include "cb/breaker/time.h"

namespace cb::exercises {

// Rejects anything that is not a plain JSON-style number, anything finer than a microsecond
// (digits past the sixth decimal must be zeros), and anything too large for the timeline.
[[nodiscard]] Result<Duration> parse_seconds(std::string_view text);

// The shortest decimal that parse_seconds reads back as `d`: 1500000 us -> "1.5".
[[nodiscard]] std::string format_seconds(Duration d);

}  // namespace cb::exercises
