// The exercises' own tables, reproduced on the engine through the named profiles.
#include <doctest/doctest.h>

#include "cb/breaker/profiles.h"
#include "harness.h"

namespace cb::testing {
namespace {

TEST_CASE("the balancer: its trace for one backend") {
  Harness h(profiles::balancer());
  // now  call           count/half_ok   state
  //  0   error x4       4               CLOSED
  h.at(0);
  CHECK(h.calls("FFFF") == "FFFF");
  CHECK(h.state() == State::Closed);
  CHECK(h.breaker->status().metrics.consecutive_failures == 4);
  //  0   success        0               CLOSED     <- the run is broken
  CHECK(h.calls("S") == "S");
  CHECK(h.breaker->status().metrics.consecutive_failures == 0);
  //  0   error x5       5               OPEN       opened_at = 0
  CHECK(h.calls("FFFFF") == "FFFFF");
  CHECK(h.state() == State::Open);
  CHECK(h.breaker->status().since == at_s(0));
  //  7   call           -               OPEN       answered SHORT, nothing else changes
  h.at(7);
  const Snapshot before = h.breaker->snapshot();
  CHECK(h.calls("S") == "R");
  Snapshot after = h.breaker->snapshot();
  CHECK(after.counters.not_permitted == before.counters.not_permitted + 1);
  after.counters = before.counters;
  CHECK(after == before);
  // 30   status query   0               HALF_OPEN
  h.at(30);
  CHECK(h.state() == State::HalfOpen);
  CHECK(h.breaker->status().metrics.trial_successes == 0);
  // 30   success x2     2               HALF_OPEN
  CHECK(h.calls("SS") == "SS");
  CHECK(h.state() == State::HalfOpen);
  CHECK(h.breaker->status().metrics.trial_successes == 2);
  // 30   error          -               OPEN       opened_at = 30
  CHECK(h.calls("F") == "F");
  CHECK(h.state() == State::Open);
  CHECK(h.breaker->status().since == at_s(30));
  CHECK(h.path() == "CLOSED->OPEN OPEN->HALF_OPEN HALF_OPEN->OPEN");
}

TEST_CASE("the lab: step 3 opens on the 3rd failure after 3 successes") {
  Harness h(profiles::lab(3s));
  CHECK(h.calls("SSS") == "SSS");  // step 2
  CHECK(h.state() == State::Closed);
  // Step 3: 5 calls to /always500. Failure 1: 1/4 (not judged, under 5 calls); failure 2: 2/5
  // = 40%; failure 3: 3/6 = 50% >= 50% opens. Calls 4 and 5 are refused, so the server sees 3.
  CHECK(h.calls("FFFFF") == "FFFRR");
  CHECK(h.state() == State::Open);
  // Step 4: 10 more, all refused.
  CHECK(h.calls("SSSSSSSSSS") == "RRRRRRRRRR");
  // Step 5: after 3 s, one call: HALF_OPEN.
  h.at(3);
  CHECK(h.calls("S") == "S");
  CHECK(h.state() == State::HalfOpen);
  // Step 6: succeed until CLOSED: 3 trial outcomes in all.
  CHECK(h.calls("SS") == "SS");
  CHECK(h.state() == State::Closed);
  CHECK(h.path() == "CLOSED->OPEN OPEN->HALF_OPEN HALF_OPEN->CLOSED");
  // Step 7: a new breaker, 10 x 400, still CLOSED with 0 failures.
  Harness fresh(profiles::lab(3s));
  CHECK(fresh.calls("IIIIIIIIII") == "IIIIIIIIII");
  CHECK(fresh.state() == State::Closed);
  CHECK(fresh.breaker->status().metrics.window.failures == 0);
}

TEST_CASE("the lab: the per-service thresholds - payment 35% and notifications 65%") {
  SUBCASE("payment trips at 4 of 10 (40%), where the lab would not") {
    Harness p(profiles::payment());
    CHECK(p.calls("SSSSSSFFF") == "SSSSSSFFF");  // 3 of 9 = 33%
    CHECK(p.state() == State::Closed);
    CHECK(p.calls("F") == "F");  // 4 of 10 = 40% >= 35%
    CHECK(p.state() == State::Open);
  }
  SUBCASE("notifications waits for 65%: 3 of 5 (60%) is not enough, 4 of 6 (67%) is") {
    Harness n(profiles::notifications());
    CHECK(n.calls("SSFFF") == "SSFFF");
    CHECK(n.state() == State::Closed);
    CHECK(n.calls("F") == "F");
    CHECK(n.state() == State::Open);
  }
}

TEST_CASE("payments: 3 failures in a row - 10 s - exactly one trial") {
  Harness h(profiles::lesson());
  CHECK(h.calls("FF") == "FF");
  CHECK(h.state() == State::Closed);
  CHECK(h.calls("F") == "F");
  CHECK(h.state() == State::Open);
  h.at(9.999);
  CHECK(h.calls("S") == "R");
  h.at(10);
  const Admission trial = h.breaker->try_acquire();
  REQUIRE(trial);
  // While the trial is out, everyone else fails fast.
  CHECK(h.calls("SSSS") == "RRRR");
  SUBCASE("the trial succeeds: CLOSED, and traffic resumes") {
    (void)h.breaker->record(trial.ticket, {Verdict::Success, 80ms});
    CHECK(h.state() == State::Closed);
    CHECK(h.calls("SSS") == "SSS");
  }
  SUBCASE("the trial fails: OPEN for another full 10 s") {
    (void)h.breaker->record(trial.ticket, {Verdict::Failure, 0ms});
    CHECK(h.state() == State::Open);
    h.at(19.9);
    CHECK(h.calls("S") == "R");
    h.at(20);
    CHECK(h.calls("S") == "S");
    CHECK(h.state() == State::Closed);
  }
}

TEST_CASE("the replay exercise: the probe breaker's first example and its two-state counter-example") {
  SUBCASE("threshold 2, cool-down 10: trips at 1, rejects 2, the probe at 11 heals it") {
    Harness h(profiles::probe(2, 10s));
    std::string out;
    for (auto [t, ok] : {std::pair{0.0, false}, {1.0, false}, {2.0, true}, {11.0, true}, {12.0, true}}) {
      h.at(t);
      out += h.call(ok ? Verdict::Success : Verdict::Failure) + " ";
    }
    CHECK(out == "fail fail refused ok ok ");
  }
  SUBCASE("still down after the cool-down: one probe, then rejections") {
    Harness h(profiles::probe(2, 10s));
    std::string out;
    for (double t : {0.0, 1.0, 11.0, 12.0}) {
      h.at(t);
      out += h.call(Verdict::Failure) + " ";
    }
    CHECK(out == "fail fail fail refused ");  // a two-state breaker would say fail x4
  }
}

}  // namespace
}  // namespace cb::testing
