#pragma once
// Traces for driving a breaker call by call against the lab's rules (conformance_model.h): how
// they are generated from a seed, how a program's answers are compared with the model's, and
// how a trace it fails on is shrunk to a smallest one it still fails on.
//
// A program is anything that answers a whole trace: for tests an object in this process, for
// `cb-grade --conformance` a process on the line protocol of `cb-lab conform`.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cb/grade/conformance_model.h"

namespace cb::grade::conformance {

struct Trace {
  Settings settings;
  std::vector<Call> calls;
};

struct Answer {
  Decision decision = Decision::Permitted;
  State state = State::Closed;
};

// The program's answers to `trace`, one per call it answered (fewer if it stopped early).
using Program = std::function<std::vector<Answer>(const Trace& trace)>;

// Trace number `index` of the run seeded `seed`: settings drawn around the lab's (window 4-20,
// minimum 1 to window, rate 10-90%, wait 100-5000 ms, 1-5 trials; every 5th trace the lab's own),
// and 20-120 calls biased to the rules' edges: runs of failures up to the minimum, rates landing
// exactly on the threshold, calls exactly at the end of the wait and just before it, 4xx in
// HALF_OPEN, and long quiet stretches that let the window slide.
[[nodiscard]] Trace generate(std::uint64_t seed, int index);

struct Divergence {
  std::size_t at = 0;  // the first call where the program and the model differ
  Step want;           // the model's answer there
  std::optional<Answer> got;  // the program's; nullopt if it gave none
};

// The first call where `answers` differ from the model's, or nullopt when they agree on all.
[[nodiscard]] std::optional<Divergence> compare(const Trace& trace, const std::vector<Answer>& answers);

// What the program most likely got wrong at `d`, for a person: the rule that decided the call,
// read together with how the program's answer differs (a trial permitted but judged at once is
// not the same mistake as a trial refused).
[[nodiscard]] std::string explain(const Divergence& d, const Settings& settings);

// A smallest trace `program` still diverges on, found greedily from `failing`: drop the calls
// after the divergence, then any call whose removal keeps it diverging, make results plainer
// (a 500 for a timeout, a 200 or 500 for any other status), round times to whole milliseconds,
// and move the settings to the lab's where the divergence survives it. `budget` bounds the runs
// of the program.
[[nodiscard]] Trace shrink(const Trace& failing, const Program& program, int budget = 2000);

}  // namespace cb::grade::conformance

namespace cb::grade::conformance {

// `command` (run by /bin/sh -c, in a process group of its own) as a Program on the line protocol:
// started once per trace, fed the settings line and then each call, one answer awaited per call
// within `per_call`; a program that answers late, wrongly or not at all stops being read, and
// what it answered so far is its answer (compare() then names the call). Killed, with its group,
// when the trace ends.
[[nodiscard]] Program process_program(const std::string& command, std::chrono::milliseconds per_call);

// The settings line and a call line of the protocol.
[[nodiscard]] std::string settings_line(const Settings& s);
[[nodiscard]] std::string call_line(const Call& c);

}  // namespace cb::grade::conformance
