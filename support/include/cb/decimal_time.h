#pragma once
// Seconds written as decimals ("0.1", "9.999", "1e-3", "30"), read exactly to the microsecond,
// and durations with a unit ("4s", "250ms", "1.5m"). The replay exercise compares times as decimals: 0.1 +
// 0.2 must be 0.3, which a double cannot promise.

#include <chrono>
#include <string>
#include <string_view>

#include "cb/result.h"

namespace cb {

// Rejects anything that is not a plain JSON-style number, anything finer than a microsecond
// (digits past the sixth decimal must be zeros), and anything too large for an int64 of
// microseconds.
[[nodiscard]] Result<std::chrono::microseconds> parse_seconds(std::string_view text);

// A number with a unit: us, ms, s, m or h ("4s", "250ms", "1.5s"). A bare number is seconds.
[[nodiscard]] Result<std::chrono::microseconds> parse_duration(std::string_view text);

// The shortest decimal that parse_seconds reads back as `d`: 1500000 us -> "1.5".
[[nodiscard]] std::string format_seconds(std::chrono::microseconds d);

}  // namespace cb
