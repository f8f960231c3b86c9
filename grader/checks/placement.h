#pragma once
// Where the breaker's stamped decisions fall among the requests the server saw, decided once,
// from the whole record, for every check and picture that needs it (steps 3, 4 and 6, and the
// HTML page's trial bracket).
//
// A stamp of resolution r names an interval [s, s + r): `10:00:03.012Z` is some moment in
// [03.012, 03.013). Alone it allows every reading from "after the requests answered before s"
// to "after the requests answered before s + r". The rest of the record narrows that:
//
//   CLOSED->OPEN among step 3's burst: the burst ends where the server stopped receiving
//   /always500 (the next call was refused). If the stamp allows the trip to have come after the
//   last of them, that is the reading: nothing reached the server while OPEN, and the trip was
//   late (or on time). Only a stamp that ends before the last one was answered proves calls
//   reached the server while OPEN. So a `>` breaker (it trips on the 4th, refuses the 5th) is
//   charged to step 3 every time, however the 4th's answer falls against the stamp's
//   millisecond on a busy machine.
//
//   HALF_OPEN->CLOSED among the successful trials: what the stamp proves (answered before s, and
//   at least the one the close judged) is the count, unless the stamp allows the count the
//   rules call for; those answered inside the interval may have come after it, and are named,
//   not counted.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cb/grade/artifacts.h"
#include "cb/grade/record.h"

namespace cb::grade {

// The first line FROM->TO in the log, wherever it is (the order is step 8's to judge), and the
// last: the trip of step 3 is the first CLOSED->OPEN, the close of step 6 the last
// HALF_OPEN->CLOSED.
[[nodiscard]] const TransitionLine* find_transition(const std::vector<TransitionLine>& log, std::string_view from,
                                                    std::string_view to);
[[nodiscard]] const TransitionLine* last_transition(const std::vector<TransitionLine>& log, std::string_view from,
                                                    std::string_view to);

struct Placement {
  std::size_t low = 0;      // the stamp alone allows after `low` ...
  std::size_t high = 0;     // ... up to after `high` requests answered
  std::size_t reading = 0;  // what the whole record reads: after this many
};

// CLOSED->OPEN among the burst's /always500. nullopt when there is nothing to place (no record,
// no burst, no stamped CLOSED->OPEN) or the stamp cannot be this burst's (before it began, or
// more than a second after it ended: step 8 says the log is not this run's).
[[nodiscard]] std::optional<Placement> place_trip(const LabRun& run, const std::vector<TransitionLine>& log);

// HALF_OPEN->CLOSED among the successful trials (`ok`, in order), where the rules call for the
// close after `wanted` of them: the reading is that count where the stamp allows it (the benefit
// of the doubt), else what the stamp proves. nullopt when there is no stamped HALF_OPEN->CLOSED
// or a trial has no wall-clock time.
[[nodiscard]] std::optional<Placement> place_close(const std::vector<const RecordEntry*>& ok,
                                                   const std::vector<TransitionLine>& log, std::size_t wanted);

// The successful calls among the trials, in order: what step 6 counts, and what the close is
// placed among.
[[nodiscard]] std::vector<const RecordEntry*> successful_trials(const LabRun& run);

}  // namespace cb::grade
