#pragma once
// cb-grade --conformance: a breaker program driven with generated traces, every departure from
// the rules named and shown on a smallest trace, as one graded part of the report.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "cb/grade/conformance_deadline.h"
#include "cb/grade/conformance_traces.h"
#include "cb/grade/report.h"
#include "cb/grade/trace_set.h"

namespace cb::grade {

struct ConformanceOptions {
  TraceSet traces;
  // For asking more than the traces: experiments on the wrong ones, and shrinking, all told.
  conformance::ShrinkBudget shrink{5000, std::chrono::seconds{60}, {}};
  double points = 1;  // all or nothing: one wrong answer is a wrong breaker
  std::string visibility = "visible";
  // Called after each trace is judged, in order (never two at once).
  std::function<void(std::size_t done, std::size_t total)> progress;
  int jobs = 1;  // traces run at once (each its own process); the verdict does not depend on it
  // The whole part, traces and the runs that explain and shrink them (--conformance-timeout;
  // zero: none). No run starts after it: what was judged by then stands, the traces not run are
  // said to be so, and a part with nothing wrong by then fails as too slow ("too_slow"). A run
  // that started before may end one trace's limit after it.
  std::chrono::milliseconds time_limit{0};
  // A run of this many traces in a row answered with no answer in time ends the part (0: never):
  // a breaker that hangs would otherwise cost every trace its whole limit.
  int no_answer_run = 3;
  conformance::TimeSource now = [] { return std::chrono::steady_clock::now(); };
  // A regrade: where the first grading's times ran out, to run out at the same points.
  std::optional<conformance::TimeCuts> replay_cuts;
  // A replay of a part kept before its cuts were: it was too slow after this many traces (-1: not).
  int stop_after = -1;
};

// Runs traces 0..traces-1 of the seed through `programs` and judges every one. A trace answered
// otherwise than the rules is put down to one departure (diagnose()); the first such trace is
// shrunk and tabled, and so is the one of each departure that went wrong soonest. A sample of
// the traces answered in a shared process (every 50th, and the wrong ones) is asked again
// alone: answers that differ are `state_carried_over`. With jobs > 1 the traces run in rounds
// of that many at once and are judged in order, so what is reported is the same.
[[nodiscard]] ConformancePart check_conformance(const ConformanceOptions& options,
                                                const conformance::Programs& programs);
// A program that answers every trace alone.
[[nodiscard]] ConformancePart check_conformance(const ConformanceOptions& options, const conformance::Program& program);

// The part failed without running a trace (or after the ones that ran), for `rule` ("prebuilt",
// "too_slow") and why: a copy of the harness in the submission, say.
[[nodiscard]] ConformancePart conformance_refused(const ConformanceOptions& options, std::string rule,
                                                  std::string message);

// A seed nobody chose: from the kernel's random source, small enough to read out and retype.
[[nodiscard]] std::uint64_t random_seed();

}  // namespace cb::grade
