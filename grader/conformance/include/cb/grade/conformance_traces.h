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
#include "cb/grade/trace_set.h"
#include "cb/grade/wording.h"

namespace cb::grade::conformance {

struct Trace {
  Settings settings;
  std::vector<Call> calls;
};

struct Answer {
  Decision decision = Decision::Permitted;
  State state = State::Closed;
  friend bool operator==(const Answer&, const Answer&) = default;
};

// What a program made of a trace: its answers, one per call it answered (fewer if it stopped
// early), and, when it did not end as the protocol says, why.
struct Replies {
  std::vector<Answer> answers;
  std::string problem;      // "exited with 1", "no answer within 5 s", "answered 'x', which is not ..."
  std::string stderr_tail;  // the end of what it wrote on standard error, for the person reading
  // It was stopped at the trace's time limit, waiting for an answer or its exit: running it
  // again costs the whole limit again.
  bool timed_out = false;
  // Answered by a process that had answered other traces before this one: what it kept from
  // them may have changed these answers (check_conformance asks again, alone).
  bool shared = false;
  // Its process was kept for another trace: whether it exits 0 at the end of its input is not
  // known from this run (check_conformance asks again, alone, to find out).
  bool open = false;
  // Its process said, in its first answer, that it takes calls in flight ("in_flight": true).
  bool in_flight = false;
  // A replay had no kept answer to it (the grade was kept by a grader that asked otherwise):
  // it shows nothing about the program.
  bool unkept = false;
  Replies() = default;
  Replies(std::vector<Answer> a) : answers(std::move(a)) {}  // NOLINT: a program that only answers
};

using Program = std::function<Replies(const Trace& trace)>;

// A program as the check drives it. `run` answers a trace, perhaps in a process that answered
// others before (Replies::shared); `alone` answers it in a process of its own, which is how a
// breaker that carries state from one trace to the next is told apart. Without `alone`, every
// run is taken to be alone.
struct Programs {
  Program run;
  Program alone;
  std::function<int()> processes;  // how many processes were started so far; empty: not known
  // Runs that only explain a departure (experiments): empty means `run`. A replay answers one it
  // has no kept answer to as `unkept`, so an experiment a newer grader adds shows nothing, where
  // a judged trace answered so would change the verdict.
  Program explore;
};

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

// Trace number `index` of the run seeded `seed` with calls in flight: the settings as generate()
// draws them, and lines that begin calls, end them (in another order than they began, a result
// coming back after the state its call began in has changed) or make one whole, biased to the
// edges only overlap reaches: more trials begun in HALF_OPEN than it permits, a 4xx trial giving
// its permit back while others are in flight, calls let through in CLOSED ending after it opened.
// Every call it lets through ends before the trace does.
[[nodiscard]] Trace generate_in_flight(std::uint64_t seed, int index);

// A trace aimed at one rule, so that no seed misses it: a call let through in CLOSED is held
// while the breaker trips (a minimum of one call), waits, and closes again on its trials, then
// comes back failed. The rules drop it as late; a breaker whose permit is the state's name, or
// that drops late results only in HALF_OPEN, counts it and trips. Ordinary traffic follows.
[[nodiscard]] Trace generate_held_across(std::uint64_t seed, int index);

// How many of a run's traces with calls in flight are generate_held_across's (the first ones),
// before generate_in_flight's.
inline constexpr int kHeldAcrossTraces = 5;

// A trace aimed at the threshold's edge, so that no seed misses it: a full window whose failure
// rate is exactly the threshold (the rules open: `>` does not), or under it by less than half a
// percent (the rules stay CLOSED: a rate rounded to a whole percent first opens), alternately.
// Ordinary traffic follows.
[[nodiscard]] Trace generate_rate_edge(std::uint64_t seed, int index);

// How many of a run's traces are generate_rate_edge's: every 4th from the 2nd, the first ones.
inline constexpr int kRateEdgeTraces = 6;

// Trace number `index` of a run seeded `seed`: generate()'s; every 4th from the 2nd, the first
// kRateEdgeTraces of those, aimed at the threshold's edge; for a program that takes calls in
// flight, every 4th from the 3rd with calls in flight, the first kHeldAcrossTraces of those aimed
// at late results. Those two cores are generation 2's (TraceSet::generation); generation 1's
// traces are the others' alone, as graders before them made.
[[nodiscard]] Trace trace_for(std::uint64_t seed, int index, bool in_flight, int generation = grade::kTraceGeneration);

// Drops each End whose call the rules did not let through when it began, or whose Begin is not
// in the trace (the protocol sends no end for those): what a shrunk trace is made into.
void drop_orphan_ends(Trace& t);

struct Divergence {
  std::size_t at = 0;         // the first call where the program and the model differ
  Step want;                  // the model's answer there
  std::optional<Answer> got;  // the program's; nullopt if it gave none
};

// What the rules answer under `settings` to each call, in order (the model as a program).
[[nodiscard]] std::vector<Answer> model_answers(const Settings& settings, const std::vector<Call>& calls);

// Whether `answers` are, call by call up to and with `last`, what the rules give under `settings`.
[[nodiscard]] bool answered_as(const Trace& t, const Settings& settings, const std::vector<Answer>& answers,
                               std::size_t last);

// When each call of `t` finds the breaker OPEN under the rules, the instant its wait ends; -1
// for a call that finds it otherwise.
[[nodiscard]] std::vector<double> wait_ends(const Trace& t);

// The counted calls made in CLOSED since it last closed, up to and including call `last`, true
// for a failure (the window is the last `window` of them).
[[nodiscard]] std::vector<bool> counted_since_closed(const Trace& t, std::size_t last);

// The first call where `answers` differ from the model's, or nullopt when they agree on all.
[[nodiscard]] std::optional<Divergence> compare(const Trace& trace, const std::vector<Answer>& answers);

struct Explanation {
  std::string id;    // stable, for tools: a rule's id ("minimum_calls") or a finding's ("settings_ignored")
  std::string text;  // for a person
};

// What the program most likely got wrong at `d`, for a person, from the answers alone: the rule
// that decided the call, read together with how the program's answer differs (a trial permitted
// but judged at once is not the same mistake as a trial refused) and with the whole trace (a
// trip the model did not make, with more counted calls than the window holds, means old calls
// were kept, when its answers to the whole trace are a window's that never slides, unless
// `blame_window` is false: an experiment showed its window slides). diagnose()
// (conformance_diagnosis.h) asks the program more before it settles.
[[nodiscard]] Explanation explain(const Divergence& d, const Trace& trace, const Replies& replies,
                                  bool blame_window = true);

// A smallest trace `program` still diverges on, found greedily from `failing`: drop the calls
// after the divergence, then any call whose removal keeps it diverging; start the times at 0,
// shorten the gaps between calls (to none, to round numbers, to the end of a wait), make results
// plainer (a 500 for a timeout or any 5xx, a 400 for any 4xx, a 200 for any other) and times
// whole milliseconds, and move the settings to the lab's where the divergence survives it.
// `budget` bounds the runs of the program, `time` the wall time spent (a program slow to fail is
// shrunk as far as it gets).
struct ShrinkBudget {
  int runs = 2000;
  std::chrono::milliseconds time{std::chrono::seconds{60}};
  // Asked before every run, with the runs and the time: true stops the shrinking there (the
  // part's own deadlines, which a regrade must meet at the same run).
  std::function<bool()> stop;
};
// What a smaller trace must still show, beyond a divergence.
struct ShrinkGoal {
  // Whether a candidate that diverges still shows the same departure; it may run `program` (the
  // runs count against the budget). Empty: any divergence will do.
  std::function<bool(const Trace&, const Replies&, const Divergence&, const Program& program)> same;
  bool keep_settings = false;  // the departure is about the settings themselves
};
struct Shrunk {
  Trace trace;
  int runs = 0;          // of the program, while shrinking
  bool complete = true;  // false: the budget ran out first
};
[[nodiscard]] Shrunk shrink(const Trace& failing, const Program& program, ShrinkBudget budget = {},
                            const ShrinkGoal& goal = {});

}  // namespace cb::grade::conformance

namespace cb::grade::conformance {

// The settings line and a call line of the protocol.
[[nodiscard]] std::string settings_line(const Settings& s);
[[nodiscard]] std::string call_line(const Call& c);

}  // namespace cb::grade::conformance
