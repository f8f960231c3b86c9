// The fixtures in tests/fixtures/submissions: a good run, one per mistake the lab warns about
// (derived from the good run by make_fixtures.py), and a real run of students/library_breaker.py
// (python3-circuitbreaker, saved by `cb-grade --run ... --save-record`), each with the server's
// record of it and the verdicts and key messages it must get.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "cb/grade/grade.h"
#include "evidence_of.h"
#include "temp_dir.h"

namespace cb::grade {
namespace {

using cb::testing::slurp;

// Every fixture: the exact verdict of each step (so the step a mistake is charged to, and that
// no other step is charged for it), the report's status, and the key words of its messages.
void check_fixture(const std::string& name) {
  const std::string dir_path = std::string(CB_FIXTURES) + "/submissions/" + name;
  auto dir = SubmissionDir::open(dir_path);
  REQUIRE(dir.ok());
  auto record = parse_record(slurp(dir_path + "/record.json"));
  REQUIRE_MESSAGE(record.ok(), (record.ok() ? "" : record.error().message));
  const auto expected = nlohmann::json::parse(slurp(dir_path + "/expected.json"));
  const Report report = grade_steps(cb::testing::evidence_of(*dir, *record, ""), GradeOptions{});
  REQUIRE(report.steps.size() == 8);
  std::string messages;
  for (const StepReport& s : report.steps) {
    CAPTURE(s.step);
    std::string step_messages;
    for (const Check& c : s.checks) step_messages += c.id + ": " + c.message + "\n";
    CAPTURE(step_messages);
    CHECK(to_string(s.status) == expected["steps"][std::to_string(s.step)].get<std::string>());
    messages += step_messages;
  }
  for (const std::string& note : report.notes) messages += note + "\n";
  for (const auto& m : expected["messages"]) {
    CAPTURE(m.get<std::string>());
    CAPTURE(messages);
    CHECK(messages.find(m.get<std::string>()) != std::string::npos);
  }
  CHECK(to_string(report.status) == expected["status"].get<std::string>());
  CHECK(report.passed == (expected["status"] == "pass"));
  CHECK(exit_code(report) == (expected["status"] == "pass" ? 0 : expected["status"] == "fail" ? 1 : 2));
  // With a record, a check is skipped only with a reason a person can act on.
  for (const StepReport& s : report.steps)
    for (const Check& c : s.checks)
      if (c.status == Status::Skip) CHECK(!c.message.empty());
  // Contaminated evidence is found once and said once, first; every check it touched says it
  // was not judged, without repeating why.
  if (report.status == Status::Error) {
    REQUIRE(report.notes.size() == 1);
    CHECK(report.notes[0].find(report.evidence.problem) != std::string::npos);
    for (const StepReport& s : report.steps)
      for (const Check& c : s.checks)
        if (c.status == Status::Error) {
          CHECK(c.message.rfind("not judged", 0) == 0);
          CHECK(c.message.find(report.evidence.problem) == std::string::npos);
        }
  }
}

const std::set<std::string> kFixtures = {"good",
                                         "counts-4xx",
                                         "single-trial",
                                         "closes-after-one-trial",
                                         "leaks-through-open",
                                         "leaks-after-trip",
                                         "slow-refusal",
                                         "transitions-out-of-order",
                                         "transitions-reversed",
                                         "transitions-missing",
                                         "cooldown-not-waited",
                                         "wrong-operator",
                                         "lowercase-state",
                                         "no-run-behind-the-files",
                                         "two-runs",
                                         "record-with-gap",
                                         "admin-reset-attempt",
                                         "library-circuitbreaker",
                                         "library-circuitbreaker-busy"};

TEST_CASE("fixtures: every mistake - its verdict per step - and the step it is charged to") {
  for (const std::string& name : kFixtures) {
    SUBCASE(name.c_str()) { check_fixture(name); }
  }
}

TEST_CASE("fixtures: every fixture directory is in the table") {
  std::set<std::string> found;
  for (const auto& e : std::filesystem::directory_iterator(std::string(CB_FIXTURES) + "/submissions"))
    if (e.is_directory() && std::filesystem::exists(e.path() / "expected.json"))
      found.insert(e.path().filename().string());
  CHECK(found == kFixtures);
}

TEST_CASE("without a record the server's checks are skipped - with the reason - and the rest still judged") {
  auto dir = SubmissionDir::open(std::string(CB_FIXTURES) + "/submissions/good");
  REQUIRE(dir.ok());
  const Report report = grade_steps(
      cb::testing::evidence_of(*dir, std::nullopt, "no flaky server at http://127.0.0.1:8110"), GradeOptions{});
  CHECK(report.passed);  // nothing failed
  CHECK(report.checks_run < report.checks_total);
  for (const StepReport& s : report.steps) {
    for (const Check& c : s.checks) {
      if (!c.needs_server) continue;
      CHECK(c.status == Status::Skip);
      CHECK(c.message == "no flaky server at http://127.0.0.1:8110");
    }
  }
  CHECK(report.steps[0].status == Status::Skip);  // step 1 is all server
  CHECK(report.steps[3].status == Status::Pass);  // step 4's file checks ran and passed
}

TEST_CASE("a record the program alone could reach: two runs, or one that lost its start, is its mistake in step 1") {
  // Records that are evidence failing on a shared server (exit 2) are graded when nothing but
  // the program could have made them: the fixture two-runs, and the good run's record as a ring
  // leaves it when a program floods it (its first requests pushed out).
  const std::pair<const char*, const char*> cases[] = {
      {"two-runs", "the record holds 2 runs of the lab (the 2nd begins at request #"},
      {"good", "the program made more requests than the server's record keeps"}};
  for (const auto& [fixture, message] : cases) {
    const std::string name = fixture;  // a copy: CAPTURE's lambda cannot take a structured binding in clang 14
    CAPTURE(name);
    const std::string path = std::string(CB_FIXTURES) + "/submissions/" + name;
    auto dir = SubmissionDir::open(path);
    REQUIRE(dir.ok());
    auto record = parse_record(slurp(path + "/record.json"));
    REQUIRE(record.ok());
    if (std::string(name) == "good") {
      record->entries.erase(record->entries.begin(), record->entries.begin() + 5);
      record->gap = true;
      const Report shared = grade_steps(cb::testing::evidence_of(*dir, *record, ""), GradeOptions{});
      CHECK(shared.status == Status::Error);
    }
    Evidence own = cb::testing::evidence_of(*dir, *record);
    own.expected_epoch = 1;
    own.record_private = true;
    const Report report = grade_steps(own, GradeOptions{});
    CHECK(report.status == Status::Fail);
    CHECK(exit_code(report) == 1);
    CHECK(report.evidence.problem.empty());
    CHECK(report.score == 0);
    const Check& once = report.steps[0].checks[1];
    CHECK(once.id == "s1.once");
    CHECK(once.status == Status::Fail);
    CHECK(once.message.rfind(message, 0) == 0);
  }
}

TEST_CASE("--step: what must hold right after a step") {
  auto dir = SubmissionDir::open(std::string(CB_FIXTURES) + "/submissions/good");
  REQUIRE(dir.ok());
  GradeOptions just_after;
  just_after.steps = {3};
  // The good run's final state.json says CLOSED; right after step 3 it must say OPEN.
  const Report report = grade_steps(cb::testing::evidence_of(*dir, std::nullopt, "no server"), just_after);
  REQUIRE(report.steps.size() == 1);
  CHECK(report.steps[0].step == 3);
  CHECK(report.steps[0].status == Status::Fail);
  CHECK(report.steps[0].checks[1].message == "found \"CLOSED\"");
  // With the record of a run that went on: it says so, and what to do.
  const auto record = parse_record(slurp(std::string(CB_FIXTURES) + "/submissions/good/record.json"));
  REQUIRE(record.ok());
  const Report on = grade_steps(cb::testing::evidence_of(*dir, *record, ""), just_after);
  CHECK(on.steps[0].checks[1].message ==
        "found \"CLOSED\": state.json is from a later step, since the record shows the "
        "run went on to step 7; stop the program after step 3 (a starter kit: sh run.sh --until 3)");
}

TEST_CASE("--step 3 and --step 5: what state.json counts as failures in OPEN and in HALF_OPEN") {
  cb::testing::TempDir dir;
  const auto graded = [&](int step, const std::string& state, int failures) {
    dir.write("state.json", "{\"state\": \"" + state + "\", \"failures\": " + std::to_string(failures) +
                                ", \"window_size\": 10, \"permitted_in_half_open\": 3}");
    auto sub = SubmissionDir::open(dir.path());
    REQUIRE(sub.ok());
    GradeOptions o;
    o.steps = {step};
    const Report r = grade_steps(cb::testing::evidence_of(*sub, std::nullopt, "no server"), o);
    for (const Check& c : r.steps[0].checks)
      if (c.id == "s" + std::to_string(step) + ".failures") return c;
    FAIL("no failures check");
    return Check{};
  };
  // OPEN: the window that opened it (3 of 6), or 0 for a breaker that empties it on opening.
  CHECK(graded(3, "OPEN", 3).status == Status::Pass);
  CHECK(graded(3, "OPEN", 0).status == Status::Pass);
  const Check counted = graded(3, "OPEN", 5);
  CHECK(counted.status == Status::Fail);
  CHECK(counted.message.find("\"failures\" is 5 in OPEN: the window that opened it held 3 failures of 6 calls") !=
        std::string::npos);
  // HALF_OPEN: only the trials, and the one made so far succeeded.
  CHECK(graded(5, "HALF_OPEN", 0).status == Status::Pass);
  const Check carried = graded(5, "HALF_OPEN", 3);
  CHECK(carried.status == Status::Fail);
  CHECK(carried.message.find("3 is the window that opened it, carried over") != std::string::npos);
}

// The good run's files and record, with one file written over: one mistake, alone.
Report good_with(const std::string& file, const std::string& content) {
  cb::testing::TempDir dir;
  const std::string good = std::string(CB_FIXTURES) + "/submissions/good";
  std::filesystem::copy(good, dir.path(), std::filesystem::copy_options::recursive);
  dir.write(file, content);
  auto sub = SubmissionDir::open(dir.path());
  REQUIRE(sub.ok());
  auto record = parse_record(slurp(good + "/record.json"));
  REQUIRE(record.ok());
  return grade_steps(cb::testing::evidence_of(*sub, *record), GradeOptions{});
}

TEST_CASE("a file that breaks its contract is said once - by its contract's check - and pointed to elsewhere") {
  const Report r =
      good_with("state.json", "{'state': 'CLOSED', 'failures': 0, 'window_size': 10, 'permitted_in_half_open': 3}");
  std::size_t said = 0;
  std::size_t pointed = 0;
  for (const StepReport& s : r.steps)
    for (const Check& c : s.checks) {
      said += c.message.find("a single quote where JSON has a double quote") != std::string::npos ? 1U : 0U;
      pointed += c.message == "needs state.json, which cannot be used (s6.state_contract says why)" ? 1U : 0U;
    }
  CHECK(said == 1);
  CHECK(pointed == 3);  // s1.numbers, s6.state, s6.permitted
}

// A breaker that closes on its first successful trial is CLOSED right after step 5: the report
// says why, not only that the state differs.
TEST_CASE("--step 5: CLOSED after one trial is named as closing on the first trial") {
  cb::testing::TempDir dir;
  dir.write("state.json", R"({"state": "CLOSED", "failures": 0, "window_size": 10, "permitted_in_half_open": 1})");
  auto sub = SubmissionDir::open(dir.path());
  REQUIRE(sub.ok());
  GradeOptions o;
  o.steps = {5};
  const Report r = grade_steps(cb::testing::evidence_of(*sub, std::nullopt, "no server"), o);
  const auto state = std::find_if(r.steps[0].checks.begin(), r.steps[0].checks.end(),
                                  [](const Check& c) { return c.id == "s5.state"; });
  REQUIRE(state != r.steps[0].checks.end());
  CHECK(state->status == Status::Fail);
  CHECK(state->message ==
        "found \"CLOSED\": the breaker closed on its first successful trial; it permits 3 trial calls in HALF_OPEN "
        "and closes only when they have all succeeded (state.json says permitted_in_half_open 1)");
}

// A breaker that sets its state without the function that records the change leaves the log
// empty while the record shows it opened: the report says where the lines went missing.
TEST_CASE("an empty transitions.log from a breaker that opened is named as state set directly") {
  const Report r = good_with("transitions.log", "");
  const Check& contract = r.steps[7].checks[0];
  CHECK(contract.id == "s8.log_contract");
  CHECK(contract.message ==
        "transitions.log is empty, yet the record shows the breaker opened: a change of state set directly, not "
        "through the one function that writes a line for it (move_to in the kits), is never recorded");
}

TEST_CASE("a rubric weighs the steps") {
  auto dir = SubmissionDir::open(std::string(CB_FIXTURES) + "/submissions/slow-refusal");
  auto record = parse_record(slurp(std::string(CB_FIXTURES) + "/submissions/slow-refusal/record.json"));
  REQUIRE(dir.ok());
  REQUIRE(record.ok());
  GradeOptions o;
  o.rubric = *Rubric::parse(R"({"points": {"4": 30, "8": 20}})");
  const Report report = grade_steps(cb::testing::evidence_of(*dir, *record, ""), o);
  CHECK(report.max_score == 56);  // 6 steps at 1 point, 30 and 20
  CHECK(report.score == 26);      // everything but step 4
}

TEST_CASE("the timeline places requests where the program that ran the lab says each step ended") {
  const std::string dir_path = std::string(CB_FIXTURES) + "/submissions/good";
  auto dir = SubmissionDir::open(dir_path);
  REQUIRE(dir.ok());
  auto record = parse_record(slurp(dir_path + "/record.json"));
  REQUIRE(record.ok());
  auto steps_of = [](const Report& r) {
    std::set<int> steps;
    for (const TimelineRequest& q : r.timeline.requests) steps.insert(q.step);
    return steps;
  };
  // Guessed from the record's shape: every step that sends something (this run skipped step 1's /count).
  CHECK(steps_of(grade_steps(cb::testing::evidence_of(*dir, *record, ""), GradeOptions{})) ==
        std::set<int>{2, 3, 4, 5, 6, 7});
  // Told: the first request was step 1, the rest step 2 (whatever their shape says).
  Evidence told = cb::testing::evidence_of(*dir, *record);
  told.step_last_seq = {record->entries.front().seq, record->entries.back().seq};
  const Report r = grade_steps(told, GradeOptions{});
  CHECK(steps_of(r) == std::set<int>{1, 2});
  CHECK(r.timeline.requests.front().step == 1);
  CHECK(r.timeline.requests.back().step == 2);
}

}  // namespace
}  // namespace cb::grade
