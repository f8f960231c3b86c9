// The fixtures in tests/fixtures/submissions: a good run and one per mistake the seeds warn
// about, each with the server's record of it and the verdicts and key messages it must get.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cb/grade/grade.h"

namespace cb::grade {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

void check_fixture(const std::string& name) {
  const std::string dir_path = std::string(CB_FIXTURES) + "/submissions/" + name;
  auto dir = SubmissionDir::open(dir_path);
  REQUIRE(dir.ok());
  auto record = parse_record(slurp(dir_path + "/record.json"));
  REQUIRE_MESSAGE(record.ok(), (record.ok() ? "" : record.error().message));
  const auto expected = nlohmann::json::parse(slurp(dir_path + "/expected.json"));
  const Report report = grade(*dir, *record, "", GradeOptions{});
  REQUIRE(report.steps.size() == 8);
  std::string messages;
  for (const StepReport& s : report.steps) {
    CAPTURE(s.step);
    CHECK(to_string(s.status) == expected["steps"][std::to_string(s.step)].get<std::string>());
    for (const Check& c : s.checks) messages += c.message + "\n";
  }
  for (const auto& m : expected["messages"]) {
    CAPTURE(m.get<std::string>());
    CHECK(messages.find(m.get<std::string>()) != std::string::npos);
  }
  const bool all_pass = expected["messages"].empty();
  CHECK(report.passed == all_pass);
  // With a record, a check is skipped only because another it needs failed, and says which.
  for (const StepReport& s : report.steps)
    for (const Check& c : s.checks)
      if (c.status == Status::Skip) CHECK(c.message.rfind("needs ", 0) == 0);
}

TEST_CASE("fixture: good") { check_fixture("good"); }
TEST_CASE("fixture: 4xx counted as failures") { check_fixture("counts-4xx"); }
TEST_CASE("fixture: a single half-open trial") { check_fixture("single-trial"); }
TEST_CASE("fixture: calls leaking through OPEN") { check_fixture("leaks-through-open"); }
TEST_CASE("fixture: a slow refusal") { check_fixture("slow-refusal"); }
TEST_CASE("fixture: transitions out of order") { check_fixture("transitions-out-of-order"); }
TEST_CASE("fixture: transitions missing") { check_fixture("transitions-missing"); }
TEST_CASE("fixture: the cool-down not waited") { check_fixture("cooldown-not-waited"); }
TEST_CASE("fixture: the wrong threshold operator") { check_fixture("wrong-operator"); }
TEST_CASE("fixture: a lower-case state") { check_fixture("lowercase-state"); }
TEST_CASE("fixture: files with no run behind them") { check_fixture("no-run-behind-the-files"); }

TEST_CASE("without a record the server's checks are skipped - with the reason - and the rest still judged") {
  auto dir = SubmissionDir::open(std::string(CB_FIXTURES) + "/submissions/good");
  REQUIRE(dir.ok());
  const Report report = grade(*dir, std::nullopt, "no flaky server at http://127.0.0.1:8110", GradeOptions{});
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

TEST_CASE("--step: what must hold right after a step") {
  auto dir = SubmissionDir::open(std::string(CB_FIXTURES) + "/submissions/good");
  REQUIRE(dir.ok());
  GradeOptions just_after;
  just_after.steps = {3};
  // The good run's final state.json says CLOSED; right after step 3 it must say OPEN.
  const Report report = grade(*dir, std::nullopt, "no server", just_after);
  REQUIRE(report.steps.size() == 1);
  CHECK(report.steps[0].step == 3);
  CHECK(report.steps[0].status == Status::Fail);
  CHECK(report.steps[0].checks[1].message == "state.json: \"state\" is \"CLOSED\", expected \"OPEN\"");
}

TEST_CASE("a rubric weighs the steps") {
  auto dir = SubmissionDir::open(std::string(CB_FIXTURES) + "/submissions/slow-refusal");
  auto record = parse_record(slurp(std::string(CB_FIXTURES) + "/submissions/slow-refusal/record.json"));
  REQUIRE(dir.ok());
  REQUIRE(record.ok());
  GradeOptions o;
  o.rubric = *Rubric::parse(R"({"points": {"4": 30, "8": 20}})");
  const Report report = grade(*dir, *record, "", o);
  CHECK(report.max_score == 56);  // 6 steps at 1 point, 30 and 20
  CHECK(report.score == 26);      // everything but step 4
}

}  // namespace
}  // namespace cb::grade
