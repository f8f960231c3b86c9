// A real circuit-breaker library as the student: Debian's python3-circuitbreaker, run under
// `cb-grade --run`. The library departs from the lab in four ways; the grader must find, from
// the server's record and the stamps alone, the ones the lab's steps can show, and nothing else.
//
//   departure                                   shows in the lab?   found by
//   one success in HALF_OPEN closes it           yes (step 6)        s6.closed_after_trials, or
//                                                                    s6.trials when the program
//                                                                    stops calling once CLOSED
//   trips on 3 consecutive failures, no window   no: the lab's 3 /fast + 5 /always500 trip both
//                                                rules at the same call
//   a 4xx counts as a success (resets the count) no: step 7 sends only 4xx to a fresh breaker
//   HALF_OPEN lets any number of calls through   no: the lab calls one at a time
//
// The program's state.json claims permitted_in_half_open: 3 (the library has no such setting);
// the claim passes s6.permitted and must not save step 6.
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "process.h"
#include "report_json.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;

const std::string kGrade = CB_GRADE_BIN;
// Debian's interpreter, where Debian's python3-circuitbreaker is (a python3 earlier on PATH, a
// pyenv or venv one, would not have it).
const std::string kStudents = std::string(CB_FIXTURES) + "/students";
const std::string kLibraryStudent = "/usr/bin/python3 library_breaker.py";

struct Graded {
  json report;
  std::map<std::string, json> not_passed;  // check id -> the check, for every check that did not pass
};

Graded grade(const std::string& variant) {
  const Ran library = run({"/usr/bin/python3", "-c", "import circuitbreaker"});
  REQUIRE_MESSAGE(library.exit_code == 0,
                  "python3-circuitbreaker is missing; scripts/install-deps installs it: ", library.err);
  TempDir out;
  const Ran r = run({kGrade, "--run", kLibraryStudent + variant, "--submission", kStudents, "--dir", out.path(),
                     "--any-port", "--format", "json"});
  INFO(r.out);
  INFO(r.err);
  REQUIRE(r.exit_code == 1);
  Graded g{json::parse(r.out), {}};
  for (const auto& step : g.report["steps"])
    for (const auto& c : step["checks"])
      if (c["status"] != "pass") g.not_passed[c["id"].get<std::string>()] = c;
  return g;
}

std::set<std::string> ids(const std::map<std::string, json>& checks) {
  std::set<std::string> out;
  for (const auto& [id, c] : checks) out.insert(id);
  return out;
}

std::set<int> failed_steps(const json& report) {
  std::set<int> out;
  for (const auto& step : report["steps"])
    if (step["status"] != "pass") out.insert(step["step"].get<int>());
  return out;
}

TEST_CASE("python3-circuitbreaker as a student: every departure the lab can show is found, from evidence") {
  SUBCASE("following the steps as written: it closed after 1 trial, the stamps against the record say so") {
    const Graded g = grade("");
    CHECK(failed_steps(g.report) == std::set<int>{6});
    REQUIRE(ids(g.not_passed) == std::set<std::string>{"s6.closed_after_trials"});
    const json& c = g.not_passed.at("s6.closed_after_trials");
    CHECK(c["status"] == "fail");
    CHECK(c["message"].get<std::string>().find("it closed after 1 trial") != std::string::npos);
    CHECK(c["expected"] == 3);
    CHECK(c["actual"] == 1);
    CHECK(g.report["score"] == 7);
  }
  SUBCASE("calling only while HALF_OPEN: the record holds 1 trial, and what stands on it is not judged") {
    const Graded g = grade(" until-closed");
    CHECK(failed_steps(g.report) == std::set<int>{6});
    REQUIRE(ids(g.not_passed) == std::set<std::string>{"s6.trials", "s6.closed_after_trials"});
    CHECK(g.not_passed.at("s6.trials")["status"] == "fail");
    CHECK(g.not_passed.at("s6.trials")["message"].get<std::string>().rfind("1 successful call(s) reached the server",
                                                                           0) == 0);
    // and why: the log shows it closed after that one, and the program stopped calling.
    CHECK(
        g.not_passed.at("s6.trials")["message"].get<std::string>().find(
            "the breaker closed after 1 trial (transitions.log's HALF_OPEN->CLOSED), so the program stopped calling") !=
        std::string::npos);
    const json& skipped = g.not_passed.at("s6.closed_after_trials");
    CHECK(skipped["status"] == "skip");
    CHECK(skipped["message"].get<std::string>().rfind("not judged: it stands on s6.trials", 0) == 0);
  }
  // Without stamps that can place the close, nothing proves it waited for its trials: not proven
  // does not pass (it scored 8/8 this way when stamps were optional).
  for (const char* variant : {" no-stamps", " whole-seconds"}) {
    SUBCASE(variant) {
      const Graded g = grade(variant);
      CHECK(failed_steps(g.report) == std::set<int>{6, 8});
      const json& c = g.not_passed.at("s6.closed_after_trials");
      CHECK(c["status"] == "fail");
      CHECK(c["message"].get<std::string>().rfind("not proven: HALF_OPEN->CLOSED (line 3) ", 0) == 0);
      CHECK(c["message"].get<std::string>().find("stamp transitions.log to the millisecond or finer") !=
            std::string::npos);
      const std::string contract = g.not_passed.at("s8.log_contract")["message"];
      CHECK(contract.rfind("line 1 (CLOSED->OPEN) ", 0) == 0);
      CHECK(contract.find(std::string(variant) == " no-stamps" ? "has no time stamp" : "is stamped in whole seconds") !=
            std::string::npos);
      CHECK(g.report["score"] == 6);
    }
  }
}

TEST_CASE("python3-circuitbreaker as a student: the same verdict 20 times on a busy machine, and the page agrees") {
  // Under load the call after the one trial is often answered within the millisecond the
  // program's HALF_OPEN->CLOSED stamp names; the count must not move with it.
  TempDir root;
  std::vector<std::vector<std::string>> runs;
  for (int i = 0; i < 20; ++i) {
    const std::string out = root / ("out" + std::to_string(i));
    runs.push_back({kGrade, "--run", kLibraryStudent, "--submission", kStudents, "--dir", out, "--format", "json",
                    "--save-record", out + ".record.json"});
  }
  std::vector<Ran> graded;
  {
    const BusyMachine busy;
    graded = run_all(runs, 5);
  }
  for (std::size_t i = 0; i < graded.size(); ++i) {
    CAPTURE(i);
    const json report = json::parse(graded[i].out);
    auto checks = checks_by_id(report);
    const json& c = checks["s6.closed_after_trials"];
    CHECK(c["status"] == "fail");
    CHECK(c["actual"] == 1);
    CHECK(c["message"].get<std::string>().find("it closed after 1 trial") != std::string::npos);
    // The page, from the same files and record: its trial bracket counts as the check does.
    const std::string out = root / ("out" + std::to_string(i));
    const Ran page = run({kGrade, "--dir", out, "--record", out + ".record.json", "--format", "html"});
    CHECK(page.out.find("data-trials=\"1\"") != std::string::npos);
    const bool says_one = page.out.find(">1 trial(s), then CLOSED<") != std::string::npos ||
                          page.out.find(">1 (or ") != std::string::npos;
    CHECK(says_one);
  }
}

}  // namespace
}  // namespace cb::testing
