#pragma once
// The replay exercise: replay a trace of calls [[t, ok], ...] through a `probe` breaker
// (threshold failures in a row, a cool-down, exactly one probe) and say what became of each:
// "ok", "fail" or "rejected".

#include <string>
#include <string_view>
#include <vector>

#include <cstdint>

#include "cb/result.h"
#include "cb/breaker/time.h"

namespace cb::exercises {

// The largest time and cool-down a replay takes, in seconds (about 31 years): far past any
// exercise, and far inside what microseconds in 64 bits hold when a time and a cool-down are
// added (2^63 us is 292,000 years; a cool-down of 9223372036854.775807 s once wrapped).
inline constexpr std::int64_t kMaxReplaySeconds = 1'000'000'000;

struct TraceCall {
  Duration t{0};  // since the trace's zero, exact to the microsecond
  bool ok = false;
};

// The trace as JSON text. Errors name the place: "line 1, column 9: ..." for bad JSON,
// "[2][0]: ..." for a call that is not [seconds, true|false] or whose time is out of range.
[[nodiscard]] Result<std::vector<TraceCall>> parse_trace(std::string_view json);

// Where a trace's time goes back: "[1][0]: t 5 is before the call before it (t 20)". A trace is
// a series in time (cb-lab conform refuses one that goes back too); the exercise's reference judges
// each call at its own t whatever the order, which `cb-lab replay --unordered` keeps.
[[nodiscard]] Result<void> check_times_in_order(const std::vector<TraceCall>& calls);

// Each call is judged at its own t (check_times_in_order is the caller's to ask), as the exercise's reference judges
// them. A cool-down beyond kMaxReplaySeconds is an error.
[[nodiscard]] Result<std::vector<std::string_view>> replay(int threshold, Duration cooldown,
                                                           const std::vector<TraceCall>& calls);

// ["ok","fail","rejected"]
[[nodiscard]] std::string to_json(const std::vector<std::string_view>& outcomes);

}  // namespace cb::exercises
