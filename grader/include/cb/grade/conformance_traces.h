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
#include "cb/sandbox/sandbox.h"

namespace cb::grade::conformance {

struct Trace {
  Settings settings;
  std::vector<Call> calls;
};

struct Answer {
  Decision decision = Decision::Permitted;
  State state = State::Closed;
};

// What a program made of a trace: its answers, one per call it answered (fewer if it stopped
// early), and, when it did not end as the protocol says, why.
struct Replies {
  std::vector<Answer> answers;
  std::string problem;      // "exited with 1", "no answer within 5 s", "answered 'x', which is not ..."
  std::string stderr_tail;  // the end of what it wrote on standard error, for the person reading
  Replies() = default;
  Replies(std::vector<Answer> a) : answers(std::move(a)) {}  // NOLINT: a program that only answers
};

using Program = std::function<Replies(const Trace& trace)>;

// Every time in a generated trace is a multiple of 1/8 ms: exact in binary floating point and in
// three decimals, so a program's own arithmetic on them (t - opened_at >= wait) is exact too, and
// the boundary it is tested at is the boundary it computes.
//
// Trace number `index` of the run seeded `seed`: settings drawn around the lab's (window 4-20,
// minimum 1 to window, rate 10-90%, wait 100-5000 ms, 1-5 trials; every 5th trace the lab's own),
// and 20-120 calls biased to the rules' edges: runs of failures up to the minimum, rates landing
// exactly on the threshold, calls exactly at the end of the wait and just before it, 4xx in
// HALF_OPEN, and long quiet stretches that let the window slide.
[[nodiscard]] Trace generate(std::uint64_t seed, int index);

struct Divergence {
  std::size_t at = 0;         // the first call where the program and the model differ
  Step want;                  // the model's answer there
  std::optional<Answer> got;  // the program's; nullopt if it gave none
};

// What the rules answer under `settings` to each call, in order (the model as a program).
[[nodiscard]] std::vector<Answer> model_answers(const Settings& settings, const std::vector<Call>& calls);

// The first call where `answers` differ from the model's, or nullopt when they agree on all.
[[nodiscard]] std::optional<Divergence> compare(const Trace& trace, const std::vector<Answer>& answers);

struct Explanation {
  std::string id;    // stable, for tools: a rule's id ("minimum_calls") or a finding's ("settings_ignored")
  std::string text;  // for a person
};

// What the program most likely got wrong at `d`, for a person: the rule that decided the call,
// read together with how the program's answer differs (a trial permitted but judged at once is
// not the same mistake as a trial refused) and with the whole trace (answers that match the
// lab's own settings where the trace had others mean the settings line was not read; a trip the
// model did not make, with more counted calls than the window holds, means old calls were kept).
[[nodiscard]] Explanation explain(const Divergence& d, const Trace& trace, const Replies& replies);

// A smallest trace `program` still diverges on, found greedily from `failing`: drop the calls
// after the divergence, then any call whose removal keeps it diverging, make results plainer
// (a 500 for a timeout, a 200 or 500 for any other status), start the times at 0 and round them to whole milliseconds,
// and move the settings to the lab's where the divergence survives it. `budget` bounds the runs
// of the program, `time` the wall time spent (a program slow to fail is shrunk as far as it gets).
struct ShrinkBudget {
  int runs = 2000;
  std::chrono::milliseconds time{std::chrono::seconds{60}};
};
struct Shrunk {
  Trace trace;
  int runs = 0;          // of the program, while shrinking
  bool complete = true;  // false: the budget ran out first
};
[[nodiscard]] Shrunk shrink(const Trace& failing, const Program& program, ShrinkBudget budget = {});

}  // namespace cb::grade::conformance

namespace cb::grade::conformance {

struct ProcessOptions {
  std::string command;  // run by /bin/sh -c, in the box's copy of the submission
  // Every trace's program runs in this box, in the sandbox (both outlive the Program).
  sandbox::Sandbox* sandbox = nullptr;
  const sandbox::Box* box = nullptr;
  // One trace, from the start to the exit at the end of the input: a program that has not
  // answered by then is stopped, and graded on what it answered.
  std::chrono::milliseconds trace_limit{std::chrono::seconds{5}};
  // Added to the limit of every trace that starts before the first has finished: a program may
  // build itself (the C++ kit's replay.sh compiles when its sources changed) or fill caches on
  // its first start, and that is not a verdict about its breaker.
  std::chrono::milliseconds warm_up{std::chrono::seconds{20}};
};

// A command as a Program on the line protocol, contained as --run contains the lab's program:
// started once per trace, fed the settings line and then each call, the next call sent only
// after the answer to the last; a program that answers late, wrongly or not at all stops being
// read, and what it answered so far is its answer (compare() then names the call). At the end
// of the input it must exit 0. Whatever it leaves running is killed when the trace ends.
[[nodiscard]] Program process_program(const ProcessOptions& options);

// A time as the protocol writes it: milliseconds, up to three decimals, no trailing zeros.
[[nodiscard]] std::string ms_text(double t_ms);

// The settings line and a call line of the protocol.
[[nodiscard]] std::string settings_line(const Settings& s);
[[nodiscard]] std::string call_line(const Call& c);

}  // namespace cb::grade::conformance
