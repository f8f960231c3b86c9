#pragma once
// Internal: the counters the lock-free paths bump (a permitted call in CLOSED, its success, a
// refusal in OPEN), striped per thread (cb/striped_counters.h says why).

#include <cstdint>

#include "cb/striped_counters.h"

namespace cb {

struct StripedCounters : StripedCounts<3> {
  enum Field : std::uint8_t { Permitted, Successes, NotPermitted };
};

}  // namespace cb
