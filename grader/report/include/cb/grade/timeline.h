#pragma once
// A run as events on one time axis, for the HTML report: what reached the server (the record),
// what the breaker says it did (transitions.log's stamps), and what it refused (known only to a
// program that ran the lab itself, cb-lab run). Times are microseconds on the Unix epoch: the
// record's arrival stamps and transitions.log's share that clock.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cb/grade/lab_spec.h"

namespace cb::grade {

struct Record;
struct LabRun;
struct TransitionLine;

struct TimelineRequest {
  std::uint64_t seq = 0;
  std::int64_t at_us = 0;  // arrival
  double duration_ms = 0;  // arrival to answer
  std::string path;
  std::optional<int> status;  // none: no answer was sent
  int step = 0;               // the lab step it belongs to (1-8), 0 when none
};

struct TimelineTransition {
  int line = 0;  // in transitions.log
  std::string from;
  std::string to;
  std::optional<std::int64_t> at_us;
  std::int64_t resolution_us = 0;  // the stamp's last digit: 1000 when it is in ms, truncated
};

struct Timeline {
  std::vector<TimelineRequest> requests;  // the record's, admin requests left out
  std::vector<TimelineTransition> transitions;
  std::vector<std::int64_t> refused_us;  // refusals, when the program that ran the lab says
  // Refusals the grader knows of without their times, when the program does not say them: how
  // many between two moments of the record, and from what (fastfail.txt's blocked= between the
  // two /count reads; the burst's calls that never arrived).
  struct RefusedGroup {
    std::int64_t from_us = 0;
    std::int64_t to_us = 0;
    std::size_t count = 0;
    std::string source;
  };
  std::vector<RefusedGroup> refused_groups;
  double wait_ms = 0;    // the lab's cool-down (its spec's)
  std::string log_file;  // where the transitions are read from (its spec's)
  // The successful trials before HALF_OPEN->CLOSED, as step 6's check places the close (the
  // page says what the checklist says): `trials_closed_after`, or up to `trials_closed_at_most`
  // where the stamp's last digit leaves it open.
  std::optional<std::size_t> trials_closed_after;
  std::optional<std::size_t> trials_closed_at_most;
};

// The record's requests, each placed in the lab step it belongs to (by the phases `run` found),
// and transitions.log's lines; either may be absent.
// `step_last_seq` (the last seq of each step, from the program that ran it) places each request
// where it was sent; without it, by the record's phases. `spec` gives the script's paths.
[[nodiscard]] Timeline make_timeline(const Record* record, const LabRun* run,
                                     const std::vector<TransitionLine>* transitions, const LabSpec& spec,
                                     const std::vector<std::uint64_t>& step_last_seq = {});

}  // namespace cb::grade
