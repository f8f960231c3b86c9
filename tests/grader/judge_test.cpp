// judge() on evidence alone: the conformance part judged by replaying a first run's answers says
// what that run said, stops where that run had to, and only refuses to judge (not_kept) an
// answer nobody could have given. The programs are the model with one setting bent, in process.
#include <doctest/doctest.h>

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
ConformancePart first_run(ConformanceEvidence& c, conformance::ShrinkBudget shrink = {5000, std::chrono::seconds{60}}) {
  c.command = "one-trial";
  c.traces = kTraces;
  c.seed = kSeed;
  ConformanceOptions co;
  co.command = c.command;
  co.traces = c.traces;
  co.seed = c.seed;
  co.shrink = shrink;
  const Program p = one_trial();
  ConformancePart live = check_conformance(co, c.answers.recording(Programs{p, p, {}}));
  c.shrink_cut = !live.shrunk_fully;
  c.seconds = live.seconds;
  return live;
}

// A first run of a right breaker (the model itself), recorded into `c`.
void record_right(ConformanceEvidence& c) {
  const Program right = [](const conformance::Trace& t) { return conformance::model_answers(t.settings, t.calls); };
  c.command = "right";
  c.traces = kTraces;
  c.seed = kSeed;
  ConformanceOptions co;
  co.traces = kTraces;
  co.seed = kSeed;
  (void)check_conformance(co, c.answers.recording(Programs{right, right, {}}));
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
  const ConformancePart live = first_run(c, {5000, std::chrono::milliseconds{0}});
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
