#pragma once
// Wall-clock times as text: ISO-8601, UTC, in the one form the whole project writes
// ("2026-01-01T10:00:03.012Z") and the forms it accepts. Times are microseconds since the Unix
// epoch.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cb {

// `fraction_digits` 3 (milliseconds) or 6 (microseconds), cut, not rounded; times before 1970
// floor to the earlier second, as a clock would read.
[[nodiscard]] std::string format_utc(std::int64_t unix_us, int fraction_digits = 3);

// YYYY-MM-DDTHH:MM:SS[.fraction](Z|+00:00|-00:00); nullopt for anything else, or for a date
// that does not exist (31 February).
[[nodiscard]] std::optional<std::int64_t> parse_utc(std::string_view text);

}  // namespace cb
