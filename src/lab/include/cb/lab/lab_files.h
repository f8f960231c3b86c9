#pragma once
// The four files the lab is graded on, in their contracts' exact form (docs/LAB.md).

#include <string>
#include <vector>

#include "cb/breaker/metrics.h"
#include "cb/breaker/options.h"
#include "cb/breaker/transition.h"

namespace cb::lab {

// state.json and ignore4xx.json: the contract's four keys, then what helps a person reading it.
// "failures" counts the current window's failed calls (in HALF_OPEN, the failed trials).
[[nodiscard]] std::string state_file(const Status& status, const BreakerOptions& options, TimePoint now);

// fastfail.txt: "before=6 after=6 blocked=10 max_ms=0.004"
[[nodiscard]] std::string fastfail_file(long long before, long long after, long long blocked, double max_ms);

// transitions.log: "2026-01-01T10:00:00.012Z CLOSED->OPEN", one per line.
[[nodiscard]] std::string transitions_file(const std::vector<Transition>& transitions);

}  // namespace cb::lab
