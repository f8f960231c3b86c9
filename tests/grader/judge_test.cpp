// judge() on evidence alone: the conformance part judged by replaying a first run's answers says
// what that run said, stops where that run had to, and only refuses to judge (not_kept) an
// answer nobody could have given. The programs are the model with one setting bent, in process.
#include <doctest/doctest.h>

#include <mutex>
#include <utility>

#include "cb/grade/conformance_check.h"
#include "cb/grade/judge.h"

namespace cb::grade {
namespace {

using conformance::Program;
using conformance::Programs;

// "One trial decides": the model's rules with a single permitted trial.
Program one_trial() {
  return [](const conformance::Trace& t) {
    conformance::Settings s = t.settings;
    s.permitted_in_half_open = 1;
    return conformance::model_answers(s, t.calls);
  };
}

constexpr int kTraces = 40;
constexpr std::uint64_t kSeed = 7;

// The first run, live, recording into `c.answers`.
ConformancePart first_run(ConformanceEvidence& c,
                          conformance::ShrinkBudget shrink = {5000, std::chrono::seconds{60}, {}}) {
  c.traces = {"one-trial", kTraces, kSeed, ""};
  ConformanceOptions co;
  co.traces = c.traces;
  co.shrink = std::move(shrink);
  const Program p = one_trial();
  ConformancePart live = check_conformance(co, c.answers.recording(Programs{p, p, {}, {}}));
  c.shrink_cut = !live.shrunk_fully;
  c.seconds = live.seconds;
  return live;
}

// A first run of a right breaker (the model itself), recorded into `c`.
void record_right(ConformanceEvidence& c) {
  // The rules themselves, taking calls in flight as a right program says it does.
  const Program right = [](const conformance::Trace& t) {
    conformance::Replies r(conformance::model_answers(t.settings, t.calls));
    r.in_flight = true;
    return r;
  };
  c.traces = {"right", kTraces, kSeed, ""};
  ConformanceOptions co;
  co.traces = c.traces;
  (void)check_conformance(co, c.answers.recording(Programs{right, right, {}, {}}));
}

TEST_CASE("judge: a replay of the answers a first run recorded says what that run said") {
  ConformanceEvidence c;
  const ConformancePart live = first_run(c);
  REQUIRE(live.status == Status::Fail);
  const ConformancePart judged = judge_conformance(c, Rubric::equal());
  CHECK(judged.status == live.status);
  CHECK(judged.rule == live.rule);
  CHECK(judged.message == live.message);
  CHECK(judged.judged == live.judged);
  CHECK(judged.agreed == live.agreed);
  CHECK(judged.example.input == live.example.input);
  CHECK(judged.shrunk_fully == live.shrunk_fully);
  CHECK(judged.seconds == live.seconds);  // the program's time, not the replay's
  // Judged again, the same: nothing in the evidence moved.
  CHECK(judge_conformance(c, Rubric::equal()).message == judged.message);
}

TEST_CASE("judge: a first run whose shrinking ran out of time is judged where it stopped, not as not kept") {
  ConformanceEvidence c;
  const ConformancePart live = first_run(c, {5000, std::chrono::milliseconds{0}, {}});
  REQUIRE(live.status == Status::Fail);
  REQUIRE(!live.shrunk_fully);
  const ConformancePart judged = judge_conformance(c, Rubric::equal());
  CHECK(judged.status == Status::Fail);
  CHECK(judged.rule != "not_kept");
  CHECK(!judged.shrunk_fully);
  // The same answers without that fact: a trace the first run could have asked and did not.
  c.shrink_cut = false;
  const ConformancePart refused = judge_conformance(c, Rubric::equal());
  CHECK(refused.status == Status::Error);
  CHECK(refused.rule == "not_kept");
}

TEST_CASE("judge: a part that was too slow is judged on the traces answered before its time ran out") {
  ConformanceEvidence c;
  record_right(c);
  c.refused = {"too_slow", "answered 12 of 40 traces rightly, then ran out of the time"};
  c.judged = 12;
  const ConformancePart part = judge_conformance(c, Rubric::equal());
  CHECK(part.status == Status::Fail);
  CHECK(part.rule == "too_slow");
  CHECK(part.judged == 12);
  CHECK(part.agreed == 12);
  CHECK(part.message == c.refused.second);
  CHECK(part.score == 0);
}

// A program on a clock of its own: every run of it takes `each` of that clock's time (runs side
// by side, with jobs, take theirs one after another: a machine with one CPU for them).
struct Timed {
  std::mutex mu;
  std::chrono::steady_clock::time_point now{};
  std::chrono::milliseconds each{1000};
  int runs = 0;
  Program of(Program p) {
    return [this, p = std::move(p)](const conformance::Trace& t) {
      {
        const std::lock_guard lock(mu);
        now += each;
        ++runs;
      }
      return p(t);
    };
  }
  std::chrono::steady_clock::time_point read() {
    const std::lock_guard lock(mu);
    return now;
  }
};

// A first run, live on `clock`, recorded into `c` as gather() keeps it; `jobs` traces at once.
ConformancePart timed_run(ConformanceEvidence& c, Timed& clock, const Program& p, std::chrono::milliseconds limit,
                          conformance::ShrinkBudget shrink, int jobs = 1) {
  c.traces = {"timed", kTraces, kSeed, ""};
  ConformanceOptions co;
  co.traces = c.traces;
  co.shrink = std::move(shrink);
  co.time_limit = limit;
  co.jobs = jobs;
  co.now = [&clock] { return clock.read(); };
  const Program timed = clock.of(p);
  ConformancePart live = check_conformance(co, c.answers.recording(Programs{timed, timed, {}, {}}));
  c.jobs = jobs;
  c.shrink_cut = !live.shrunk_fully;
  c.cuts = live.cuts;
  c.time_limit = limit;
  c.seconds = live.seconds;
  return live;
}

void same_part(const ConformancePart& judged, const ConformancePart& live) {
  CHECK(judged.status == live.status);
  CHECK(judged.rule == live.rule);
  CHECK(judged.message == live.message);
  CHECK(judged.judged == live.judged);
  CHECK(judged.agreed == live.agreed);
  CHECK(judged.example.input == live.example.input);
  CHECK(judged.shrunk_fully == live.shrunk_fully);
  CHECK(judged.rules.size() == live.rules.size());
}

TEST_CASE("judge: a first run whose time ran out while it explained and shrank is judged the same on a replay") {
  // Every run takes a second: the experiments' share (5 s) runs out while the first failing
  // trace is explained, the shrinking's (10 s) a few steps into shrinking it.
  for (const int shrink_s : {4, 10, 30}) {
    CAPTURE(shrink_s);
    ConformanceEvidence c;
    Timed clock;
    const ConformancePart live =
        timed_run(c, clock, one_trial(), std::chrono::milliseconds{0}, {5000, std::chrono::seconds{shrink_s}, {}});
    REQUIRE(live.status == Status::Fail);
    CHECK(live.cuts.experiments > 0);
    c.shrink_cut = false;  // what is left to tell a replay where it stopped is the cuts alone
    const ConformancePart judged = judge_conformance(c, Rubric::equal());
    same_part(judged, live);
    CHECK(judged.rule != "not_kept");
  }
}

TEST_CASE("judge: no run starts after the part's time, however many it has left to explain a failure") {
  // Every run takes 5 s, a trace's whole limit: the time (60 s) runs out while the first failure
  // is being explained and shrunk; it is shown as it was found, and the verdict says what was
  // not run.
  ConformanceEvidence c;
  Timed clock;
  clock.each = std::chrono::seconds{5};
  const auto limit = std::chrono::seconds{60};
  const ConformancePart live = timed_run(c, clock, one_trial(), limit, {5000, std::chrono::seconds{600}, {}});
  REQUIRE(live.status == Status::Fail);
  CHECK(live.rule == "trials_judged_together");
  CHECK(clock.read() - std::chrono::steady_clock::time_point{} <= limit + clock.each);
  CHECK(live.judged < kTraces);
  CHECK(live.cuts.part > 0);
  CHECK(live.message.find("(--conformance-timeout) ran out, and the other") != std::string::npos);
  same_part(judge_conformance(c, Rubric::equal()), live);
}

TEST_CASE("judge: a first run cut by its time while it ran traces side by side is replayed in the same rounds") {
  // A slow machine: the part's time runs out after some rounds of `jobs` traces. The replay asks
  // the time at the same points only if it runs the same rounds: in rounds of one it met the cut
  // sooner, and judged fewer traces than the grading it replays.
  const Program right = [](const conformance::Trace& t) {
    conformance::Replies r(conformance::model_answers(t.settings, t.calls));
    r.in_flight = true;
    return r;
  };
  for (const int jobs : {2, 4, 8}) {
    CAPTURE(jobs);
    ConformanceEvidence c;
    Timed clock;
    clock.each = std::chrono::seconds{5};
    const auto limit = std::chrono::seconds{60};
    const ConformancePart live = timed_run(c, clock, right, limit, {5000, std::chrono::seconds{600}, {}}, jobs);
    REQUIRE(live.rule == "too_slow");
    CHECK(live.cuts.part > 0);
    const ConformancePart judged = judge_conformance(c, Rubric::equal());
    CHECK(judged.rule != "not_kept");
    same_part(judged, live);
  }
}

TEST_CASE("judge: three traces in a row with no answer in time end the part, and the rest are said not to be run") {
  // A breaker that hangs once HALF_OPEN: its answers up to there, then nothing within the limit.
  const Program hangs = [](const conformance::Trace& t) {
    conformance::Replies r(conformance::model_answers(t.settings, t.calls));
    for (std::size_t i = 0; i < r.answers.size(); ++i)
      if (r.answers[i].state == conformance::State::HalfOpen) {
        r.answers.resize(i);
        r.problem = "gave no answer within 5 s, the time limit of one trace";
        r.timed_out = true;
        break;
      }
    return r;
  };
  ConformanceEvidence c;
  Timed clock;
  const ConformancePart live =
      timed_run(c, clock, hangs, std::chrono::seconds{120}, {5000, std::chrono::seconds{60}, {}});
  REQUIRE(live.status == Status::Fail);
  CHECK(live.rule == "no_answer");
  CHECK(live.judged < kTraces);
  // The traces up to the third silent one, and not one run more: a silent trace is neither asked
  // again alone, nor explained, nor shrunk.
  CHECK(clock.runs == live.judged);
  CHECK(live.message.find("3 traces in a row got no answer") != std::string::npos);
  CHECK(live.message.find("the other " + std::to_string(kTraces - live.judged) + " were not run") != std::string::npos);
  same_part(judge_conformance(c, Rubric::equal()), live);
}

TEST_CASE("judge: evidence without files is the conformance part alone") {
  Evidence e;
  record_right(e.conformance.emplace());
  const Report r = judge(e, GradeOptions{});
  CHECK(r.steps.empty());
  REQUIRE(r.conformance);
  CHECK(r.conformance->status == Status::Pass);
  CHECK(r.status == Status::Pass);
  CHECK(r.max_score == 1);
}

}  // namespace
}  // namespace cb::grade
