// The grader's own model of the lab's rules: each rule at its boundary, with the lab's settings.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cb/grade/conformance_model.h"

namespace cb::grade::conformance {
namespace {

Call ok(double t) { return {t, 200, false}; }
Call err(double t) { return {t, 500, false}; }
Call bad(double t) { return {t, 400, false}; }
Call timeout(double t) { return {t, 0, true}; }

// "p:CLOSED" per call: decision's first letter and the state after it.
std::vector<std::string> run(Model& m, const std::vector<Call>& calls) {
  std::vector<std::string> out;
  for (const Call& c : calls) {
    const Step s = m.call(c);
    out.push_back(std::string(s.decision == Decision::Permitted ? "p:" : "r:") + std::string(to_string(s.state)));
  }
  return out;
}

TEST_CASE("conformance model: the lab's sequence trips on the 3rd failure after 3 successes") {
  Model m(lab_settings());
  CHECK(run(m, {ok(0), ok(1), ok(2), err(3), err(4)}) ==
        std::vector<std::string>{"p:CLOSED", "p:CLOSED", "p:CLOSED", "p:CLOSED", "p:CLOSED"});  // 2 of 5: 40%
  const Step third = m.call(err(5));  // 3 of 6: exactly 50% reaches it
  CHECK(third.state == State::Open);
  CHECK(third.rule == Rule::Tripped);
  CHECK(m.call(err(6)).decision == Decision::Rejected);
}

TEST_CASE("conformance model: no judgement before the window holds the minimum") {
  Model m(lab_settings());
  for (int i = 0; i < 4; ++i) {
    const Step s = m.call(err(i));
    CHECK(s.state == State::Closed);
    CHECK(s.rule == Rule::NotJudgedYet);
  }
  CHECK(m.call(err(4)).rule == Rule::Tripped);  // the 5th: 5 of 5
}

TEST_CASE("conformance model: the window slides old failures out") {
  Settings s = lab_settings();
  s.window = 4;
  s.minimum_calls = 4;
  Model m(s);
  (void)run(m, {err(0), ok(1), ok(2), ok(3)});  // 1 of 4: 25%
  const Step slid = m.call(ok(4));              // the failure slides out: 0 of 4
  CHECK(slid.rule == Rule::BelowThreshold);
  (void)m.call(err(5));
  CHECK(m.call(err(6)).state == State::Open);  // 2 of the last 4: 50%
}

TEST_CASE("conformance model: 4xx is neither a failure nor a success") {
  Model m(lab_settings());
  for (int i = 0; i < 10; ++i) CHECK(m.call(bad(i)).rule == Rule::NotCounted);
  CHECK(m.state() == State::Closed);
  SUBCASE("and a timeout is a failure") {
    for (int i = 0; i < 5; ++i) (void)m.call(timeout(10 + i));
    CHECK(m.state() == State::Open);
  }
}

TEST_CASE("conformance model: OPEN, the wait, and the trials") {
  Model m(lab_settings());
  for (int i = 0; i < 5; ++i) (void)m.call(err(i));  // opens at t = 4
  REQUIRE(m.state() == State::Open);
  SUBCASE("rejected until the wait's end; the call exactly at it is the first trial") {
    CHECK(m.call(ok(3003.999)).rule == Rule::RejectedInWait);
    const Step first = m.call(ok(3004));
    CHECK(first.decision == Decision::Permitted);
    CHECK(first.state == State::HalfOpen);
    CHECK(first.rule == Rule::FirstTrial);
  }
  SUBCASE("3 successful trials close it, judged together") {
    CHECK(run(m, {ok(3004), ok(3005), ok(3006)}) == std::vector<std::string>{"p:HALF_OPEN", "p:HALF_OPEN", "p:CLOSED"});
    SUBCASE("with an empty window") {
      for (int i = 0; i < 4; ++i) CHECK(m.call(err(3010 + i)).rule == Rule::NotJudgedYet);
    }
  }
  SUBCASE("1 failure of 3 trials (33%) still closes; 2 of 3 reopen, with a new wait from the deciding trial") {
    Model again = m;
    CHECK(run(m, {err(3004), ok(3005), ok(3006)}).back() == "p:CLOSED");
    const auto reopened = run(again, {err(3004), err(3005), ok(3006)});
    CHECK(reopened.back() == "p:OPEN");
    CHECK(again.call(ok(6005)).decision == Decision::Rejected);
    CHECK(again.call(ok(6006)).state == State::HalfOpen);
  }
  SUBCASE("a 4xx among the trials gives its slot back") {
    CHECK(run(m, {ok(3004), bad(3005), ok(3006)}) ==
          std::vector<std::string>{"p:HALF_OPEN", "p:HALF_OPEN", "p:HALF_OPEN"});
    CHECK(m.call(ok(3007)).rule == Rule::ClosedAfterTrials);
  }
}

// Calls in flight: each begins (let through or refused) and ends (counted or not) apart.
struct Flight {
  Model m;
  std::string begin(CallId id, double t) {
    const Step s = m.begin(id, t);
    return std::string(s.decision == Decision::Permitted ? "p:" : "r:") + std::string(to_string(s.state));
  }
  Step end(CallId id, const Call& c) { return m.end(id, c); }
};

Flight opened_at_4() {
  Flight f{Model(lab_settings())};
  for (int i = 0; i < 5; ++i) (void)f.m.call(err(i));
  REQUIRE(f.m.state() == State::Open);
  return f;
}

TEST_CASE("conformance model: calls in flight - HALF_OPEN lets through only its permits at once") {
  Flight f = opened_at_4();
  CHECK(f.begin(1, 3004) == "p:HALF_OPEN");
  CHECK(f.begin(2, 3004.125) == "p:HALF_OPEN");
  CHECK(f.begin(3, 3004.25) == "p:HALF_OPEN");
  CHECK(f.m.begin(4, 3004.375).rule == Rule::TrialCap);  // 3 in flight: every permit taken
  SUBCASE("a 4xx gives its permit back while the others are still in flight") {
    CHECK(f.end(2, bad(3005)).rule == Rule::NotCounted);
    CHECK(f.begin(5, 3005.5) == "p:HALF_OPEN");
    CHECK(f.begin(6, 3005.625) == "r:HALF_OPEN");
  }
  SUBCASE("the trials are judged together when the last permitted one ends, in whatever order") {
    CHECK(f.end(3, ok(3006)).rule == Rule::FirstTrial);  // the first counted
    CHECK(f.end(1, err(3007)).state == State::HalfOpen);
    CHECK(f.begin(7, 3007.5) == "r:HALF_OPEN");  // counted trials keep their permits
    const Step judged = f.end(2, ok(3008));
    CHECK(judged.state == State::Closed);  // 1 of 3
    CHECK(judged.rule == Rule::ClosedAfterTrials);
  }
}

TEST_CASE("conformance model: calls in flight - a result from before the state changed is not counted") {
  SUBCASE("calls let through in CLOSED that end after it opened") {
    Flight f{Model(lab_settings())};
    for (CallId id = 1; id <= 7; ++id) CHECK(f.begin(id, id) == "p:CLOSED");
    for (CallId id = 1; id <= 4; ++id) (void)f.end(id, err(10 + id));
    CHECK(f.end(5, err(15)).rule == Rule::Tripped);  // 5 of 5, opened at t = 15
    const Step late = f.end(6, err(16));
    CHECK(late.rule == Rule::LateResult);
    CHECK(late.state == State::Open);
    CHECK(f.begin(8, 3014.875) == "r:OPEN");  // the wait still runs from 15, not 16
    CHECK(f.begin(9, 3015) == "p:HALF_OPEN");
    CHECK(f.end(7, err(3016)).rule == Rule::LateResult);  // nor is it a trial
    CHECK(f.m.state() == State::HalfOpen);
  }
  SUBCASE("a trial of a HALF_OPEN that has since reopened") {
    Settings s = lab_settings();
    s.permitted_in_half_open = 2;
    Flight f{Model(s)};
    for (int i = 0; i < 5; ++i) (void)f.m.call(err(i));
    CHECK(f.begin(1, 3004) == "p:HALF_OPEN");
    CHECK(f.begin(2, 3005) == "p:HALF_OPEN");
    (void)f.end(1, err(3006));
    CHECK(f.end(2, err(3007)).rule == Rule::ReopenedAfterTrials);  // opened again at 3007
    CHECK(f.begin(3, 6007) == "p:HALF_OPEN");
    CHECK(f.begin(4, 6008) == "p:HALF_OPEN");
    CHECK(f.end(3, ok(6009)).rule == Rule::FirstTrial);
    CHECK(f.end(4, ok(6010)).rule == Rule::ClosedAfterTrials);
  }
}

TEST_CASE("conformance model: a call made at once answers as its beginning and its end at one t") {
  // The old protocol's line is both; the cases above hold what those answers are.
  Flight apart = opened_at_4();
  Model together = apart.m;
  const std::vector<Call> calls{ok(3004), bad(3005), err(3006), err(3007), ok(6006), ok(6007), ok(6008), ok(6009)};
  CallId id = 100;
  for (const Call& c : calls) {
    const Step one = together.call(c);
    const Step began = apart.m.begin(++id, c.t_ms);
    CHECK(one.decision == began.decision);
    if (began.decision == Decision::Rejected) {
      CHECK(one.state == began.state);
      continue;
    }
    const Step ended = apart.m.end(id, c);
    CHECK(one.state == ended.state);
    CHECK(one.rule == ended.rule);
  }
}

TEST_CASE("conformance model: every rule is described for a person, by what the breaker did wrong") {
  // Each description names the rule's own mistake (a student reads it beside the failing trace),
  // and no two rules share one, nor an id.
  const std::vector<std::pair<Rule, std::vector<std::string>>> said{
      {Rule::NotJudgedYet, {"before the window held the minimum number of calls"}},
      {Rule::BelowThreshold, {"opened though", "under the threshold"}},
      {Rule::Tripped, {"did not open", "reached the threshold"}},
      {Rule::NotCounted, {"a 4xx", "do not count"}},
      {Rule::RejectedInWait, {"let a call through", "wait in OPEN"}},
      {Rule::FirstTrial, {"first call at or after the end of the wait", "trial"}},
      {Rule::TrialCounted, {"before all the permitted ones"}},
      {Rule::ClosedAfterTrials, {"did not close", "trials succeeded"}},
      {Rule::ReopenedAfterTrials, {"did not reopen", "trials' failure rate"}},
      {Rule::Admitted, {"refused a call while CLOSED"}},
      {Rule::TrialAdmitted, {"refused a trial", "permit free"}},
      {Rule::TrialCap, {"more trials", "HALF_OPEN"}},
      {Rule::LateResult, {"came back after the state", "changed"}},
  };
  std::set<std::string_view> descriptions;
  std::set<std::string_view> ids;
  for (const auto& [rule, words] : said) {
    const std::string_view d = describe(rule);
    CAPTURE(d);
    for (const std::string& w : words) CHECK(d.find(w) != std::string_view::npos);
    // A symptom, never a mechanism: only an experiment on the program may name one.
    CHECK(d.find("instead of") == std::string_view::npos);
    CHECK(d.find('>') == std::string_view::npos);
    descriptions.insert(d);
    ids.insert(id(rule));
  }
  CHECK(descriptions.size() == said.size());
  CHECK(ids.size() == said.size());
}

}  // namespace
}  // namespace cb::grade::conformance
