#pragma once
// A breaker program on the conformance line protocol (docs/CONTRACTS.md), contained as --run
// contains the lab's program.
//
// A program is fed a trace's settings line and then each call, the next call sent only after
// the answer to the last; one that answers late, wrongly or not at all stops being read, and
// what it answered so far is its answer (compare() then names the call). A program that puts
// "traces": "many" in its first answer is sent the next trace's settings line after a trace's
// last answer, and so answers many traces in one process; any other gets one process per
// trace, and must exit 0 at the end of its input. What a process leaves running is killed when
// it ends.

#include <chrono>
#include <functional>
#include <string>

#include "cb/grade/conformance_traces.h"
#include "cb/sandbox/sandbox.h"

namespace cb::grade::conformance {

struct ProcessOptions {
  std::string command;  // run by /bin/sh -c, in the box's copy of the submission
  // Every process runs in this box, in the sandbox (both outlive the Programs).
  sandbox::Sandbox* sandbox = nullptr;
  const sandbox::Box* box = nullptr;
  // One trace, from its settings line to its last answer (and, for a process that ends with it,
  // to the exit): a program that has not answered by then is stopped, and graded on what it
  // answered.
  std::chrono::milliseconds trace_limit{std::chrono::seconds{5}};
  // Added to the limit of every trace that starts before the first has finished: a program may
  // build itself (the C++ kit's replay.sh compiles when its sources changed) or fill caches on
  // its first start, and that is not a verdict about its breaker.
  std::chrono::milliseconds warm_up{std::chrono::seconds{20}};
  // A process that takes many traces is ended after this many and a new one started: what it
  // leaks, and the box's CPU limit, are then a matter of one process's share of the traces.
  int traces_per_process = 500;
  // Told why the grader itself could not start a process (no descriptor left for its pipes, a
  // sandbox step that failed): that trace shows nothing about the program, and the grading is the
  // grader's failure, never the student's. Called from the threads that run traces.
  std::function<void(const std::string&)> grader_failed;
};

// `run` takes an idle process that answers many traces, or starts one; `alone` always starts
// one for the trace and ends it at the trace's end. Processes are ended with the last copy of
// the Programs.
[[nodiscard]] Programs process_programs(const ProcessOptions& options);

}  // namespace cb::grade::conformance
