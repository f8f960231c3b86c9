// cb-grade --conformance as a user runs it: real programs on the line protocol, real reports.
// A breaker with each classic mistake is caught, shrunk to a few calls and named by rule; a
// right one, and the project's own engine, pass every trace.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "process.h"
#include "sanitized.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;

const std::string kGrade = CB_GRADE_BIN;
const std::string kLab = CB_LAB_BIN;
const std::string kBent = CB_BENT_BIN;
// The programs graded here, as a student's submission holds them: the grader runs each in a
// copy of this folder (its box) and shows it nothing else, so they are copied in once.
const std::string& programs() {
  static TempDir dir;
  static const bool copied = [] {
    for (const std::string& from : {kBent, kLab, std::string(CB_FIXTURES) + "/students/good_breaker.py"})
      std::filesystem::copy_file(from, dir / std::filesystem::path(from).filename().string());
    // A sanitized cb-lab is over the 256 MiB a submission may hold, nearly all of it debug
    // information: the copy handed in goes without it.
    if (CB_SANITIZED != 0) REQUIRE(run({"/usr/bin/strip", "--strip-debug", dir / "cb-lab"}).exit_code == 0);
    // Real libraries behind the protocol, where the tests keep them (the adapter finds its
    // library by its path).
    for (const char* folder : {"conformance/libraries", "third_party/cockatiel-4.0.0"}) {
      const std::filesystem::path to = std::filesystem::path(dir.path()) / "tests" / folder;
      std::filesystem::create_directories(to);
      std::filesystem::copy(std::string(CB_TESTS) + "/" + folder, to, std::filesystem::copy_options::recursive);
    }
    return true;
  }();
  (void)copied;
  return dir.path();
}
const std::string kBentHere = "./cb_bent_breaker";
const std::string kLabHere = "./cb-lab";

// A grader's command line, with what the project's own programs need in a sanitizer build.
// The project's own cb-lab stands in for a breaker here: nothing handed in is refused as
// prebuilt (the grader would refuse that copy of the harness otherwise).
std::vector<std::string> graded(std::vector<std::string> argv) {
  for (const std::string& f : sanitized_program_flags()) argv.push_back(f);
  argv.insert(argv.end(), {"--refuse-prebuilt", "none"});
  return argv;
}

// Traces per run: 200 (the default) in a normal build. A sanitizer build starts every program
// many times slower, and is there to check memory and races, not to cover traces: 20.
const std::string kTraces = std::to_string(CB_CONFORMANCE_TRACES);

json conformance(const std::string& command, const std::vector<std::string>& more, int want_exit) {
  std::vector<std::string> argv =
      graded({kGrade, "--conformance", command, "--submission", programs(), "--format", "json"});
  argv.insert(argv.end(), more.begin(), more.end());
  if (std::find(more.begin(), more.end(), "--traces") == more.end()) argv.insert(argv.end(), {"--traces", kTraces});
  const Ran r = run(argv);
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == want_exit);
  return json::parse(r.out);
}

// The same run's text report.
std::string graded_text(const std::string& command, const std::vector<std::string>& more) {
  std::vector<std::string> argv =
      graded({kGrade, "--conformance", command, "--submission", programs(), "--traces", kTraces});
  argv.insert(argv.end(), more.begin(), more.end());
  const Ran r = run(argv);
  INFO(r.out, r.err);
  return r.out;
}

// Whether a process whose command line holds `needle` is running (read from /proc).
bool running(const std::string& needle) {
  for (auto [pid, cmdline] : process_command_lines()) {
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("conformance: a right breaker passes every trace of 20 seeds") {
  for (int seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    const json report = conformance(kBentHere + " --mistake none", {"--seed", std::to_string(seed)}, 0);
    const json& c = report["conformance"];
    CHECK(c["status"] == "pass");
    CHECK(c["agreed"] == CB_CONFORMANCE_TRACES);
    CHECK(c["seed"] == seed);
    CHECK(report["score"] == 1);
  }
}

TEST_CASE("conformance: the project's engine (cb-lab conform) agrees with the grader's model") {
  const json report = conformance(kLabHere + " conform", {"--seed", "2026"}, 0);
  CHECK(report["conformance"]["agreed"] == CB_CONFORMANCE_TRACES);
}

TEST_CASE("conformance: each mistake is caught with a minimal counterexample named by rule") {
  struct Mistake {
    const char* flag;
    std::set<std::string> rules;  // what the report may name
    std::size_t most_calls;       // the shrunk trace is at most this long
  };
  const Mistake mistakes[] = {
      {"minimum-ignored", {"minimum_calls"}, 2},
      {"rate-strict", {"trip_at_threshold", "reopened_after_trials"}, 12},
      {"wait-strict", {"first_trial_at_wait_end"}, 12},
      {"window-never-slides", {"window_slides"}, 25},
      {"4xx-failure", {"4xx_not_counted"}, 12},
      {"one-trial", {"trials_judged_together"}, 12},
      {"settings-ignored", {"settings_ignored"}, 12},
      {"wait-ignored", {"settings_ignored"}, 14},
      {"4xx-success", {"4xx_not_counted"}, 12},
      {"4xx-trial", {"4xx_not_counted"}, 12},
      {"no-cap", {"half_open_cap"}, 16},
      {"late-counted", {"late_result"}, 16},
  };
  for (const Mistake& m : mistakes) {
    SUBCASE(m.flag) {
      const json report = conformance(kBentHere + " --mistake " + m.flag, {"--seed", "1"}, 1);
      const json& c = report["conformance"];
      INFO(c.dump(1));
      CHECK(c["status"] == "fail");
      CHECK(report["score"] == 0);
      CHECK(m.rules.count(c["rule"].get<std::string>()) == 1);
      CHECK(c["rows"].size() <= m.most_calls);
      CHECK(c["rows"].back()["differs"] == true);
      CHECK(c["shrunk_fully"] == true);
      // The input shown replays the mistake: fed to the program by hand, it answers the same.
      std::string input;
      for (const auto& line : c["input"]) input += line.get<std::string>() + "\n";
      const Ran replay = run({"/bin/sh", "-c", kBent + " --mistake " + m.flag}, input);
      const auto last = json::parse(replay.out.substr(replay.out.rfind('\n', replay.out.size() - 2) + 1));
      // A call's end is answered with the state alone.
      const std::string decision = last.contains("decision") ? last["decision"].get<std::string>() + " " : "";
      CHECK(decision + last["state"].get<std::string>() == c["rows"].back()["got"]);
      MESSAGE(std::string(m.flag) << ": trace of " << c["original_calls"] << " calls shrunk to " << c["rows"].size()
                                  << " in " << c["shrink_runs"] << " runs: [" << c["rule"].get<std::string>() << "] "
                                  << c["message"].get<std::string>());
    }
  }
}

// The line to repeat a run carries what its answers depend on: the traces, the program's
// environment, the limits; it once said only the command and the seed.
TEST_CASE("conformance: the line to repeat the run carries every flag its answers depend on") {
  std::vector<std::string> argv = graded({kGrade, "--conformance", kBentHere + " --mistake minimum-ignored",
                                          "--submission", programs(), "--seed", "1", "--traces", "7"});
  argv.insert(argv.end(), {"--program-env", "A_FLAG=1"});
  const Ran r = run(argv);
  INFO(r.out, r.err);
  CHECK(r.exit_code == 1);
  const auto at = r.out.find("to repeat the run: cb-grade --conformance ");
  REQUIRE(at != std::string::npos);
  const std::string line = r.out.substr(at, r.out.find('\n', at) - at);
  CHECK(line.find(" --traces 7") != std::string::npos);
  CHECK(line.find(" --program-env 'A_FLAG=1'") != std::string::npos);
  CHECK(line.find(" --refuse-prebuilt 'none'") != std::string::npos);
  CHECK(line.find(" --submission ") != std::string::npos);
  CHECK(line.rfind(" --seed 1") == line.size() - 9);
}

TEST_CASE("conformance: what a broken program did is said, never a grader crash") {
  SUBCASE("a command that does not exist") {
    const json c = conformance("/nonexistent/breaker", {"--seed", "1"}, 1)["conformance"];
    CHECK(c["rule"] == "no_answer");
    CHECK(c["message"].get<std::string>().find("exited with 127") != std::string::npos);
    // Said once, on no trace: a program that cannot start is not shrunk, and is not "200 of 200".
    CHECK(c["message"].get<std::string>().rfind("your program did not answer the first call of the first trace: it ",
                                                0) == 0);
    CHECK(c["judged"] == 1);
    CHECK(c["shrink_runs"] == 0);
    CHECK(c["rows"].empty());
    REQUIRE(c.contains("stderr_tail"));  // (a missing key would be an assertion, not a failure)
    CHECK(c["stderr_tail"].get<std::string>().find("not found") != std::string::npos);
  }
  SUBCASE("what it wrote to standard error after closing its output is in the report") {
    // It closes the protocol's socket at once, so the grader stops reading that, then writes its
    // last words and exits: they are read at the trace's end, not lost with the socket.
    const json c =
        conformance("exec 0<&- 1>&-; sleep 0.1; echo 'last words' >&2; exit 3", {"--seed", "1"}, 1)["conformance"];
    CHECK(c["rule"] == "no_answer");
    REQUIRE(c.contains("stderr_tail"));
    CHECK(c["stderr_tail"].get<std::string>().find("last words") != std::string::npos);
  }
  SUBCASE("a program that never answers is stopped at the trace's time limit") {
    const json c = conformance("sleep 30", {"--seed", "1", "--timeout", "300ms", "--warm-up", "0s"}, 1)["conformance"];
    CHECK(c["message"] ==
          "your program did not answer the first call of the first trace: it gave no answer "
          "within 0.3 s, the time limit of one trace");
    CHECK(c["rows"].empty());
  }
  SUBCASE("a program that stops answering after some traces is told which trace, not the first") {
    // Two traces answered rightly, one process each; from the third on it exits at once. A right
    // Java kit on a starved machine was told it "did not answer the first call of the first
    // trace" after two traces had been answered.
    const std::string command =
        "n=$(cat starts 2>/dev/null || echo 0); [ \"$n\" -ge 2 ] && exit 3; echo $((n + 1)) > starts; exec " +
        kBentHere + " --one-trace";
    const json c = conformance(command, {"--seed", "1", "--traces", "6", "-j", "1"}, 1)["conformance"];
    CHECK(c["rule"] == "no_answer");
    CHECK(c["message"].get<std::string>().rfind(
              "your program did not answer the first call of trace 3 (after answering 2 of the 2 before it rightly): "
              "it ",
              0) == 0);
  }
  SUBCASE("a first trace that ran out of its warm-up says what its time was for") {
    // A Java kit whose javac outlasted the first trace's time was told only "no answer within
    // 25 s, the time limit of one trace", which it is not.
    const json c =
        conformance("sleep 30", {"--seed", "1", "--timeout", "300ms", "--warm-up", "200ms"}, 1)["conformance"];
    CHECK(c["message"] ==
          "your program did not answer the first call of the first trace: it gave no answer within 0.5 s, the time "
          "limit of a first trace (0.3 s, and 0.2 s more for a program that builds itself as it starts: one that "
          "builds longer should be built before it is run, or given more with --warm-up)");
  }
  SUBCASE("the first traces get a warm-up allowance: a program that builds itself first is not failed for it") {
    // Four seconds of "building" before it answers, against a 3 s limit per trace: the traces
    // that start before the first has finished get the warm-up on top; later ones do not need it.
    // What it builds stays in its box for the later traces of the same grading, as a C++ kit's
    // build does; each grading starts from the submission as it was.
    const std::string command = "[ -e built ] || { sleep 4; touch built; }; exec " + kBentHere;
    const json ok =
        conformance(command, {"--seed", "1", "--traces", "4", "--trace-timeout", "3s", "--warm-up", "20s"}, 0);
    CHECK(ok["conformance"]["agreed"] == 4);
    CHECK_FALSE(std::filesystem::exists(programs() + "/built"));
    const json cold =
        conformance(command, {"--seed", "1", "--traces", "4", "--trace-timeout", "3s", "--warm-up", "0s"}, 1);
    CHECK(cold["conformance"]["rule"] == "no_answer");
  }
  SUBCASE("a line that is not the protocol is quoted") {
    const json c = conformance("read s; read c; echo OK; cat >/dev/null", {"--seed", "1"}, 1)["conformance"];
    CHECK(c["message"].get<std::string>().find("answered 'OK', which is not") != std::string::npos);
  }
  SUBCASE("a program that answers right but does not exit 0 at the end of its input") {
    const json c = conformance(kLabHere + " conform; exit 4", {"--seed", "1"}, 1)["conformance"];
    CHECK(c["rule"] == "protocol");
    CHECK(c["message"] == "answered every call as the rules do, but then exited with 4 at the end of its input");
  }
  // A background child with a sleep no other process has: the moment cb-grade returns, it must
  // be gone (a check that does not depend on how long the trace took).
  SUBCASE("what it leaves running is not left behind") {
    const json c = conformance("sleep 61.2345 & exec " + kLabHere + " conform", {"--seed", "1", "--traces", "1"},
                               0)["conformance"];
    CHECK(c["status"] == "pass");
    CHECK_FALSE(running("sleep 61.2345"));
  }
  SUBCASE("in the fallback too (no PID namespace), and a child holding its output open does not stall the trace") {
    const Ran r = run(graded({kGrade, "--conformance", "sleep 61.5432 & exec " + kLabHere + " conform", "--submission",
                              programs(), "--sandbox", "fallback", "--seed", "1", "--traces", "3", "--trace-timeout",
                              "20s", "--format", "json"}));
    INFO(r.out, r.err);
    // Passed: each trace ended at the program's exit, though the sleep held its output open
    // (waiting for that would have hit the 20 s limit: "did not exit").
    CHECK(r.exit_code == 0);
    CHECK_FALSE(running("sleep 61.5432"));
  }
}

}  // namespace
}  // namespace cb::testing

namespace cb::testing {
namespace {

TEST_CASE("conformance: its part in every format, and its points in the rubric") {
  TempDir dir;
  const std::string rubric = dir / "rubric.json";
  REQUIRE(run({"/bin/sh", "-c", "echo '{\"points\": {\"conformance\": 20}}' > '" + rubric + "'"}).exit_code == 0);
  const std::string bent = kBentHere + " --mistake minimum-ignored";
  SUBCASE("text: the table and how to repeat it") {
    const Ran r =
        run(graded({kGrade, "--conformance", bent, "--submission", programs(), "--seed", "3", "--rubric", rubric}));
    CHECK(r.exit_code == 1);
    CHECK(r.out.find("Conformance  your breaker, call by call, on generated traces  FAIL  0/20") != std::string::npos);
    CHECK(r.out.find("[minimum_calls]") != std::string::npos);
    CHECK(r.out.find("<- differs") != std::string::npos);
    CHECK(r.out.find("--seed 3") != std::string::npos);
    CHECK(r.out.find("Score 0/20") != std::string::npos);
  }
  SUBCASE("junit: a failing testcase of its own") {
    const Ran r =
        run(graded({kGrade, "--conformance", bent, "--submission", programs(), "--seed", "3", "--format", "junit"}));
    CHECK(r.out.find("classname=\"cb-lab.conformance\"") != std::string::npos);
    CHECK(r.out.find("<failure message=\"minimum_calls: ") != std::string::npos);
  }
  SUBCASE("gradescope: one more test with its points") {
    const Ran r = run(graded({kGrade, "--conformance", bent, "--submission", programs(), "--seed", "3", "--format",
                              "gradescope", "--rubric", rubric}));
    const json g = json::parse(r.out);
    REQUIRE(g["tests"].size() == 1);
    CHECK(g["tests"][0]["max_score"] == 20);
    CHECK(g["tests"][0]["score"] == 0);
    CHECK(g["max_score"] == 20);
  }
  SUBCASE("beside the lab's steps: one more part of the same report") {
    const std::string out = dir / "out";
    // The lab's files from a right student program (the lab's own driver resets the server,
    // which the grader forbids); its breaker, as a program, is the project's engine.
    const Ran r = run(graded({kGrade, "--run", "python3 good_breaker.py", "--submission", programs(), "--dir", out,
                              "--any-port", "--conformance", kLabHere + " conform", "--seed", "4", "--traces", kTraces,
                              "--format", "json", "--rubric", rubric}));
    INFO(r.out, r.err);
    const json report = json::parse(r.out);
    CHECK(report["steps"].size() == 8);
    CHECK(report["conformance"]["status"] == "pass");
    CHECK(report["max_score"] == 28);
    CHECK(report["score"] == 28);
    CHECK(r.exit_code == 0);
  }
  SUBCASE("a seed nobody gave is chosen and reported") {
    const json a = conformance(kLabHere + " conform", {"--traces", "2"}, 0);
    CHECK(a["conformance"]["seed"].is_number_unsigned());
  }
}

TEST_CASE("conformance: a progress line on a terminal, and none in a pipe") {
  // script(1) gives the grader a terminal; the traces counted there are the traces run.
  std::string line = "'" + kGrade + "' --conformance '" + kLabHere + " conform' --submission '" + programs() +
                     "' --seed 3 --traces 6 --format json -o /proc/self/fd/2 --refuse-prebuilt none";
  for (const std::string& f : sanitized_program_flags()) line += " '" + f + "'";
  const Ran tty = run({"/usr/bin/script", "-qec", line, "/dev/null"});
  INFO(tty.out);
  CHECK(tty.out.find("[6/6] 0:") != std::string::npos);
  const json quiet = conformance(kLabHere + " conform", {"--seed", "3", "--traces", "6"}, 0);
  CHECK(quiet["conformance"]["agreed"] == 6);
  const Ran piped = run(graded({kGrade, "--conformance", kLabHere + " conform", "--submission", programs(), "--seed",
                                "3", "--traces", "6", "--format", "json"}));
  CHECK(piped.err.empty());
}

}  // namespace
}  // namespace cb::testing

namespace cb::testing {
namespace {

TEST_CASE("conformance: calls in flight reach the cap on trials, and a program that takes none cannot pass by it") {
  // Calls one at a time never have two trials in flight: a breaker with no cap answers every one
  // of those rightly. Not saying "in_flight" is no way out: the rules it kept from being probed
  // are not passed, and the part says which, why, and how to speak the protocol.
  const json blind = conformance(kBentHere + " --mistake no-cap --one-at-a-time", {"--seed", "1"}, 1);
  const json& b = blind["conformance"];
  CHECK(b["status"] == "fail");
  CHECK(b["rule"] == "not_probed");
  CHECK(b["agreed"] == CB_CONFORMANCE_TRACES);
  CHECK(b["in_flight"] == false);
  CHECK(b["not_probed"] == json::array({"half_open_cap", "late_result"}));
  CHECK(b["message"].get<std::string>().find("half_open_cap and late_result, which only calls in flight can reach") !=
        std::string::npos);
  CHECK(graded_text(kBentHere + " --mistake no-cap --one-at-a-time", {"--seed", "1"})
            .find("[not_probed] answered all " + std::to_string(CB_CONFORMANCE_TRACES) +
                  " traces rightly, but one call at a time") != std::string::npos);
  // So is a right breaker that makes every call one at a time: nothing shows it right there.
  CHECK(conformance(kBentHere + " --mistake none --one-at-a-time", {"--seed", "1"}, 1)["conformance"]["rule"] ==
        "not_probed");
  // The same breaker taking calls in flight fails, on every seed, for its own rule.
  for (int seed = 1; seed <= 5; ++seed) {
    CAPTURE(seed);
    const json c = conformance(kBentHere + " --mistake no-cap", {"--seed", std::to_string(seed)}, 1)["conformance"];
    CHECK(c["in_flight"] == true);
    CHECK(c.contains("not_probed") == false);
    CHECK(c["rule"] == "half_open_cap");
    for (const json& r : c["rules"]) CHECK(r["rule"] == "half_open_cap");
  }
  // A right breaker that takes them passes them, as the project's engine does.
  const json right = conformance(kBentHere + " --mistake none", {"--seed", "9"}, 0)["conformance"];
  CHECK(right["in_flight"] == true);
  CHECK(right["agreed"] == CB_CONFORMANCE_TRACES);
}

TEST_CASE("conformance: one process answers many traces, and a program that does not say it can gets one per trace") {
  // "traces": "many" in its first answer: the traces go to a process per job, with a few run
  // alone besides (the first, to see it exit 0, and every 50th).
  const json many = conformance(kBentHere + " --mistake none", {"--seed", "5", "-j", "2"}, 0)["conformance"];
  CHECK(many["agreed"] == CB_CONFORMANCE_TRACES);
  CHECK(many["processes"].get<int>() <= 2 + 1 + CB_CONFORMANCE_TRACES / 50);
  const json one = conformance(kBentHere + " --mistake none --one-trace", {"--seed", "5", "-j", "2"}, 0)["conformance"];
  CHECK(one["agreed"] == CB_CONFORMANCE_TRACES);
  CHECK(one["processes"] == CB_CONFORMANCE_TRACES);
  SUBCASE("and a program that keeps its process is still held to exit 0 at the end of its input") {
    const json c = conformance(kLabHere + " conform; exit 4", {"--seed", "1", "--traces", "3"}, 1)["conformance"];
    CHECK(c["rule"] == "protocol");
  }
}

TEST_CASE("conformance: a breaker that keeps state from one trace to the next is named, both runs side by side") {
  const json c = conformance(kBentHere + " --mistake carries-state", {"--seed", "1"}, 1)["conformance"];
  INFO(c.dump(1));
  CHECK(c["rule"] == "state_carried_over");
  REQUIRE_FALSE(c["rows"].empty());
  const json& last = c["rows"].back();
  CHECK(last["differs"] == true);
  REQUIRE(last.contains("alone"));
  CHECK(last["alone"] != last["got"]);
  CHECK(last["alone"] == last["expected"]);  // alone, it is a right breaker
  // Replayed by hand (a process of its own), it answers as the "alone" column says.
  std::string input;
  for (const auto& line : c["input"]) input += line.get<std::string>() + "\n";
  const Ran replay = run({"/bin/sh", "-c", kBent + " --mistake carries-state"}, input);
  const auto answer = json::parse(replay.out.substr(replay.out.rfind('\n', replay.out.size() - 2) + 1));
  CHECK(answer["decision"].get<std::string>() + " " + answer["state"].get<std::string>() == last["alone"]);
}

// A run alone is an experiment; one that ran out of time before it answered proves nothing (a
// machine too busy to start it looks the same), so the shared answers stand. It was once read as
// state carried over, with "alone" answers that were never given.
TEST_CASE("conformance: a trace run alone that gets no answer in time is no evidence against the breaker") {
  const json c = conformance(kBentHere + " --mistake slow-after-first-start",
                             {"--seed", "1", "-j", "1", "--trace-timeout", "1s"}, 0)["conformance"];
  INFO(c.dump(1));
  CHECK(c["status"] == "pass");
  CHECK(c["processes"].get<int>() >= 2);  // the run alone was made, and timed out
}

// Each of these was named for another rule before its cause was found by experiment: a 4xx
// taken for a success blamed on the threshold or the minimum, a 4xx taken for a trial blamed on
// the trials, a refusal at the wait's end blamed on the 4xx that happened to be there, a
// hard-coded wait blamed on the wait's end.
TEST_CASE("conformance: a departure is named for its cause, on every trace it decides") {
  struct Case {
    const char* mistake;
    int seed;
    std::set<std::string> rules;  // every rule the summary may name
  };
  const Case cases[] = {
      {"4xx-success", 3, {"4xx_not_counted"}},
      {"4xx-success", 4, {"4xx_not_counted"}},
      {"4xx-trial", 3, {"4xx_not_counted"}},
      {"4xx-trial", 4, {"4xx_not_counted"}},
      {"4xx-failure", 4, {"4xx_not_counted"}},
      {"4xx-failure", 6, {"4xx_not_counted"}},
      {"wait-strict", 4, {"first_trial_at_wait_end"}},
      {"wait-ignored", 1, {"settings_ignored"}},
      {"minimum-ignored", 2, {"minimum_calls"}},
      {"one-trial", 2, {"trials_judged_together"}},
      {"window-never-slides", 2, {"window_slides"}},
      {"rate-strict", 2, {"trip_at_threshold", "reopened_after_trials"}},
  };
  for (const Case& k : cases) {
    CAPTURE(k.mistake);
    CAPTURE(k.seed);
    const json c =
        conformance(kBentHere + " --mistake " + k.mistake, {"--seed", std::to_string(k.seed)}, 1)["conformance"];
    CHECK(k.rules.count(c["rule"].get<std::string>()) == 1);
    REQUIRE(c.contains("rules"));
    int traces = 0;
    for (const json& r : c["rules"]) {
      CAPTURE(r["rule"]);
      CHECK(k.rules.count(r["rule"].get<std::string>()) == 1);  // settings_ignored among them: it reads them
      traces += r["traces"].get<int>();
    }
    CHECK(traces == CB_CONFORMANCE_TRACES - c["agreed"].get<int>());  // every wrong trace, put down to one
  }
}

TEST_CASE("conformance: a counterexample's times are shrunk to round numbers and the wait") {
  // Generated traces keep every wait a multiple of 100 ms; the calls of a shrunk trace come at
  // once or a whole wait apart (a 6-call counterexample need not start its story at t=5228).
  for (const char* mistake : {"wait-strict", "one-trial", "4xx-trial", "rate-strict"}) {
    CAPTURE(mistake);
    const json c = conformance(kBentHere + " --mistake " + std::string(mistake), {"--seed", "3"}, 1)["conformance"];
    REQUIRE_FALSE(c["rows"].empty());
    std::vector<json> shown{c["rows"]};
    for (const json& r : c.value("rules", json::array())) shown.push_back(r["rows"]);
    for (const json& rows : shown)
      for (const json& row : rows) {
        CAPTURE(row["t_ms"]);
        CHECK(std::fmod(row["t_ms"].get<double>(), 100.0) == 0.0);
      }
  }
}

TEST_CASE("conformance: real libraries, each rightly failed, with every departure named") {
  // Each adapter says what its library cannot express (the table at its top); the probe must
  // find each of those on one seed's traces, not only the one trace 1 meets first.
  struct Library {
    const char* command;
    std::set<std::string> must;  // rules the summary must name
  };
  const Library libraries[] = {
      // No window and no rate (consecutive failures; a success resets them), one trial decides,
      // a 4xx counted as a success.
      {"python3 tests/conformance/libraries/circuitbreaker_replay.py",
       {"trip_at_threshold", "trials_judged_together", "4xx_not_counted"}},
      // > for >=, the trials judged before all are made, a 4xx trial taken for a success, and the
      // closing trial kept in the window (it counts toward the minimum).
      {"node tests/conformance/libraries/cockatiel_replay.mjs",
       {"trip_at_threshold", "trials_judged_together", "4xx_not_counted", "minimum_calls"}},
  };
  for (const Library& l : libraries) {
    CAPTURE(l.command);
    const json c = conformance(l.command, {"--seed", "1", "--traces", "200"}, 1)["conformance"];
    std::set<std::string> named;
    for (const json& r : c["rules"]) named.insert(r["rule"].get<std::string>());
    for (const std::string& rule : l.must) {
      CAPTURE(rule);
      CHECK(named.count(rule) == 1);
    }
    CHECK(named.count("no_answer") == 0);
    CHECK(named.count("protocol") == 0);
    MESSAGE(l.command << ": " << c.value("agreed", 0) << " of 200 agreed; " << json(named).dump());
  }
}

TEST_CASE("conformance: the summary of every departure, in every format") {
  const std::string bent = kBentHere + " --mistake rate-strict";
  const std::vector<std::string> common{kGrade, "--conformance", bent,   "--submission", programs(), "--seed",
                                        "1",    "--traces",      kTraces};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> argv = common;
    argv.insert(argv.end(), more.begin(), more.end());
    return run(graded(argv));
  };
  const json j = json::parse(with({"--format", "json"}).out)["conformance"];
  REQUIRE(j["rules"].size() >= 1);
  const std::string first = j["rules"][0]["rule"].get<std::string>();
  const std::string count = std::to_string(j["rules"][0]["traces"].get<int>()) + " traces";
  const std::string text = with({}).out;
  CHECK(text.find("every departure, over all") != std::string::npos);
  CHECK(text.find(first) != std::string::npos);
  CHECK(text.find(count) != std::string::npos);
  CHECK(text.find("trace(s)") == std::string::npos);
  const std::string junit = with({"--format", "junit"}).out;
  CHECK(junit.find("every departure, over all") != std::string::npos);
  const json g = json::parse(with({"--format", "gradescope"}).out);
  CHECK(g["tests"][0]["output"].get<std::string>().find("every departure, over all") != std::string::npos);
  TempDir dir;
  const std::string page = dir / "report.html";
  REQUIRE(with({"--format", "html", "-o", page}).exit_code == 1);
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(html.find("every departure, over all") != std::string::npos);
}

TEST_CASE("conformance: a breaker that answers rightly but slowly fails as too slow at --conformance-timeout") {
  // A right breaker, a process per trace, each 0.3 s late to start: 20 traces would take 6 s.
  const json j = conformance("sleep 0.3; exec " + kBentHere + " --one-trace",
                             {"--traces", "20", "--conformance-timeout", "1s", "-j", "1"}, 1)["conformance"];
  CHECK(j["status"] == "fail");
  CHECK(j["rule"] == "too_slow");
  CHECK(j["judged"].get<int>() < 20);
  CHECK(j["judged"] == j["agreed"]);  // every trace it answered, it answered rightly
  CHECK(j["message"].get<std::string>().find("then ran out of the 1 s a submission's conformance may take") !=
        std::string::npos);
}

TEST_CASE(
    "conformance: the rubric's conformance_timeout is the part's time, unless --conformance-timeout says otherwise") {
  TempDir dir;
  const std::string rubric = dir / "rubric.json";
  std::ofstream(rubric) << R"({"conformance_timeout": 1})";
  const std::string slow = "sleep 0.3; exec " + kBentHere + " --one-trace";
  const json j = conformance(slow, {"--traces", "20", "--rubric", rubric, "-j", "1"}, 1)["conformance"];
  CHECK(j["rule"] == "too_slow");
  CHECK(j["judged"].get<int>() < 20);
  const json flag = conformance(slow, {"--traces", "8", "--rubric", rubric, "--conformance-timeout", "60s", "-j", "1"},
                                0)["conformance"];
  CHECK(flag["status"] == "pass");
}

}  // namespace
}  // namespace cb::testing

namespace cb::testing {
namespace {

TEST_CASE("conformance: a part too slow in a batch is judged the same on a regrade of what was kept") {
  TempDir root;
  std::filesystem::create_directories(root / "class/slow");
  std::filesystem::copy_file(kBent, root / "class/slow/cb_bent_breaker");
  const auto batch = run(graded({kGrade, "--batch", root / "class", "--sandbox", "fallback", "--conformance",
                                 "sleep 0.3; exec " + kBentHere + " --one-trace", "--traces", "20",
                                 "--conformance-timeout", "1s", "--reports", root / "reports", "--format", "json"}));
  INFO(batch.out, batch.err);
  REQUIRE(batch.exit_code == 1);
  const auto part = [&] {
    std::ifstream in(root / "reports/slow/report.json");
    return json::parse(in)["conformance"];
  };
  const json first = part();
  CHECK(first["rule"] == "too_slow");
  CHECK(first["judged"].get<int>() > 0);
  CHECK(first["judged"].get<int>() < 20);
  CHECK(first["judged"] == first["agreed"]);
  const auto again = run({kGrade, "--regrade", root / "reports", "--format", "json"});
  INFO(again.err);
  REQUIRE(again.exit_code == 1);
  CHECK(again.err.find("0 verdicts changed, 0 only rescaled") != std::string::npos);
  const json second = part();
  for (const char* field : {"status", "rule", "message", "judged", "agreed", "seconds", "processes"})
    CHECK_MESSAGE(second[field] == first[field], field);
}

}  // namespace
}  // namespace cb::testing

namespace cb::testing {
namespace {

TEST_CASE(
    "conformance: a breaker that hangs in HALF_OPEN is stopped after three silent traces, and a regrade says the same") {
  // Each trace that reaches HALF_OPEN waits out its limit (1 s here, 5 s by default): left to run,
  // the traces, the runs that explain them and the shrinking would each wait it out, minutes of
  // a class's grading for one student.
  TempDir root;
  std::filesystem::create_directories(root / "class/hangs");
  std::filesystem::copy_file(kBent, root / "class/hangs/cb_bent_breaker");
  const auto batch = run(graded({kGrade, "--batch", root / "class", "--sandbox", "fallback", "--conformance",
                                 kBentHere + " --mistake hangs-in-half-open", "--trace-timeout", "1s", "--warm-up",
                                 "0s", "--reports", root / "reports", "--format", "json"}));
  INFO(batch.out, batch.err);
  REQUIRE(batch.exit_code == 1);
  const auto part = [&] {
    std::ifstream in(root / "reports/hangs/report.json");
    return json::parse(in)["conformance"];
  };
  const json first = part();
  CHECK(first["status"] == "fail");
  CHECK(first["rule"] == "no_answer");
  CHECK(first["judged"].get<int>() < 200);
  // Three silent traces in a row, each its own process, and the few that answered before them.
  CHECK(first["processes"].get<int>() <= first["judged"].get<int>() + 1);
  CHECK(first["seconds"].get<double>() < 30);
  CHECK(first["message"].get<std::string>().find("traces in a row got no answer within the time limit of one trace") !=
        std::string::npos);
  CHECK(first["message"].get<std::string>().find("were not run") != std::string::npos);

  const auto again = run({kGrade, "--regrade", root / "reports", "--format", "json"});
  INFO(again.err);
  REQUIRE(again.exit_code == 1);
  CHECK(again.err.find("0 verdicts changed, 0 only rescaled") != std::string::npos);
  const json second = part();
  for (const char* field : {"status", "rule", "message", "judged", "agreed", "seconds", "processes", "rules"})
    CHECK_MESSAGE(second[field] == first[field], field);
}

}  // namespace
}  // namespace cb::testing
