#pragma once
// What the caller tells the breaker about a finished call. Deciding the verdict (is a 404 a
// failure?) is not the breaker's job: see cb/classify for the changeable list of rules.

#include <cstdint>
#include <string_view>

#include "cb/breaker/time.h"

namespace cb {

enum class Verdict : std::uint8_t {
  Success,
  Failure,
  Ignored,  // neither: counts toward nothing, and gives back a half-open trial slot
};

// The caller measures the call's duration (with the same Clock it gave the breaker), so the
// breaker needs no clock read on its fast path. A counted call slower than the configured
// slow-call duration is "slow", whether it succeeded or failed.
struct CallResult {
  Verdict verdict = Verdict::Success;
  Duration elapsed{0};
};

[[nodiscard]] std::string_view to_string(Verdict v) noexcept;

}  // namespace cb
