#pragma once
// The replay exercise: replay a trace of calls [[t, ok], ...] through a `probe` breaker
// (threshold failures in a row, a cool-down, exactly one probe) and say what became of each:
// "ok", "fail" or "rejected".

#include <string>
#include <string_view>
#include <vector>

#include "cb/result.h"
#include "cb/breaker/time.h"

namespace cb::exercises {

struct TraceCall {
  Duration t{0};  // since the trace's zero, exact to the microsecond
  bool ok = false;
};

// The trace as JSON text. Errors name the place: "line 1, column 9: ..." for bad JSON,
// "[2][0]: ..." for a call that is not [seconds, true|false].
[[nodiscard]] Result<std::vector<TraceCall>> parse_trace(std::string_view json);

// Each call is judged at its own t (times need not increase, exactly as the seed's reference).
[[nodiscard]] Result<std::vector<std::string_view>> replay(int threshold, Duration cooldown,
                                                           const std::vector<TraceCall>& calls);

// ["ok","fail","rejected"]
[[nodiscard]] std::string to_json(const std::vector<std::string_view>& outcomes);

}  // namespace cb::exercises
