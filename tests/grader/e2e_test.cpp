// cb-grade as a program: --run on small student programs that are right and that cheat, the
// time limit, the exit codes, and every output format, well-formed.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cb/flaky/server.h"
#include "cb/flaky/endpoints.h"
#include "cb/grade/record.h"
#include "process.h"
#include "skip.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string kGrade = CB_GRADE_BIN;
// The student programs' folder is the submission: each program runs in a copy of it, and sees
// nothing else of the file system but the system.
const std::string kStudents = std::string(CB_FIXTURES) + "/students";
const std::string kStudent = "good_breaker.py";
const std::string kGood = std::string(CB_FIXTURES) + "/submissions/good";

Ran grade_run(const TempDir& out, const std::string& command, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv{kGrade,  "--run",    command,      "--submission", kStudents,
                                "--dir", out.path(), "--any-port", "--format",     "json"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return run(argv);
}

std::map<int, std::string> verdicts(const std::string& report) {
  std::map<int, std::string> out;
  const json parsed = json::parse(report);  // kept: a range-for over json::parse(...)["steps"] would dangle
  for (const auto& s : parsed["steps"]) out[s["step"].get<int>()] = s["status"].get<std::string>();
  return out;
}

TEST_CASE("cb-grade --run: a right solution passes all eight steps on full evidence") {
  TempDir out;
  const Ran r = grade_run(out, "python3 " + kStudent);
  CHECK(r.exit_code == 0);
  const json report = json::parse(r.out);
  CHECK(report["score"] == 8);
  CHECK(report["passed"] == true);
  CHECK(report["checks_run"] == report["checks_total"]);
  CHECK(std::filesystem::exists(out / "transitions.log"));
  // How long the program ran is in the report; the lab's 3 s cool-down is inside it.
  CHECK(report["program"]["exit_code"] == 0);
  CHECK(report["program"]["timed_out"] == false);
  CHECK(report["program"]["seconds"].get<double>() >= 3.0);
}

TEST_CASE("cb-grade --run: files written without calling the server fail") {
  TempDir out;
  const Ran r = grade_run(out, "python3 " + kStudent + " no-server");
  CHECK(r.exit_code == 1);
  for (const auto& verdict : verdicts(r.out)) {
    CAPTURE(verdict.first);  // the step
    CHECK(verdict.second == "fail");
  }
}

// Two breakers whose verdicts once came by luck: their calls are quick enough to put the next
// answer inside a transition's millisecond stamp, where the grader cannot tell which answer the
// transition followed. The server answers no lab request within a millisecond of its arrival, so
// a millisecond stamp always decides, on an idle machine or a busy one.
std::map<std::string, std::string> failed_checks(const std::string& report) {
  std::map<std::string, std::string> out;
  const json parsed = json::parse(report);
  for (const auto& s : parsed["steps"])
    for (const auto& c : s["checks"])
      if (c["status"] == "fail") out[c["id"].get<std::string>()] = c.value("message", "");
  return out;
}

TEST_CASE("cb-grade --run: a breaker that closes after one trial fails step 6, its trials quick and its stamps in ms") {
  TempDir out;
  const Ran r = grade_run(out, "python3 " + kStudent + " one-trial");
  INFO(r.out);
  INFO(r.err);
  CHECK(r.exit_code == 1);
  const auto failed = failed_checks(r.out);
  CHECK(failed.size() == 1);
  CHECK(failed.count("s6.closed_after_trials") == 1);
  CHECK(r.out.find("benefit of the doubt") == std::string::npos);
}

TEST_CASE("cb-grade --run: a breaker that lets calls through while OPEN is charged at step 4 alone") {
  // It opens on the 3rd /always500, lets the next four calls through (two of step 3, two of step
  // 4), and waits its cool-down from its own trip: step 3's stamp is not read as a late trip, and
  // the calls it let through do not restart the cool-down step 5 measures.
  TempDir out;
  const Ran r = grade_run(out, "python3 " + kStudent + " open-calls");
  INFO(r.out);
  INFO(r.err);
  CHECK(r.exit_code == 1);
  const auto failed = failed_checks(r.out);
  for (const auto& check : failed) {
    CAPTURE(check.second);
    CHECK(check.first.rfind("s4.", 0) == 0);
  }
  CHECK(failed.count("s4.none_reached") == 1);
}

// A program that crashed in step 6 was told only "must make at least 4 calls while HALF_OPEN":
// each check the crash cost names it, in the program's own words, in every format.
TEST_CASE("cb-grade --run: a crash mid-run is named beside every check it cost") {
  TempDir out;
  const Ran r = grade_run(out, "python3 " + kStudent + " crash");
  INFO(r.out);
  CHECK(r.exit_code == 1);
  const auto failed = failed_checks(r.out);
  CHECK_FALSE(failed.empty());
  for (const auto& check : failed) {
    const std::string& message = check.second;
    CAPTURE(message);
    CHECK(message.find("your program ended with 1 (its last request to the server was in step 5): good_breaker.py, "
                       "line ") != std::string::npos);
    CHECK(message.find("ZeroDivisionError: division by zero") != std::string::npos);
  }
  CHECK(failed.count("s6.state") == 1);
  CHECK(verdicts(r.out).at(4) == "pass");  // what came before the crash stands
}

// A run.sh saved on Windows got 0 with "can't open file 'good_breaker.py\r'" and no word of why.
TEST_CASE("cb-grade --run: a run.sh with Windows line endings is named as the cause") {
  TempDir sub;
  std::filesystem::copy_file(kStudents + "/" + kStudent, sub / kStudent);
  sub.write("run.sh", "python3 " + kStudent + "\r\n");
  TempDir out;
  const Ran r = run({kGrade, "--run", "sh run.sh", "--submission", sub.path(), "--dir", out.path(), "--any-port",
                     "--format", "json"});
  INFO(r.out, r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("a script of yours has Windows line endings") != std::string::npos);
}

TEST_CASE("cb-grade --run: claiming before==after while calling through OPEN fails step 4") {
  TempDir out;
  const Ran r = grade_run(out, "python3 " + kStudent + " leak");
  CHECK(r.exit_code == 1);
  INFO(r.out);
  INFO(r.err);
  const auto v = verdicts(r.out);
  REQUIRE(v.size() == 8);
  CHECK(v.at(4) == "fail");
  CHECK(v.at(6) == "pass");
  CHECK(r.out.find("fastfail.txt quotes before=6 then after=6") != std::string::npos);
}

TEST_CASE("cb-grade --run: the time limit kills the whole process group - and grades what is there") {
  TempDir out;
  const auto t0 = std::chrono::steady_clock::now();
  const Ran r = run({kGrade, "--run", "sleep 30 & sleep 30", "--submission", kStudents, "--dir", out.path(),
                     "--any-port", "--timeout", "500ms"});
  CHECK(std::chrono::steady_clock::now() - t0 < 10s);  // a bound far from 30 s; not a speed check
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("was killed at the time limit (0.5 s)") != std::string::npos);
  // It never called the server: said once, first, rather than a missing file per step.
  CHECK(r.out.find("Your program was stopped at the time limit without calling the server") != std::string::npos);
}

TEST_CASE("cb-grade --run: the output directory is emptied of old lab files first") {
  TempDir out;
  out.write("state.json", R"({"state":"CLOSED","failures":0,"window_size":10,"permitted_in_half_open":3})");
  const Ran r = grade_run(out, "true");
  CHECK(r.exit_code == 1);
  CHECK_FALSE(std::filesystem::exists(out / "state.json"));
}

TEST_CASE("cb-grade: the grader could not run - exit 2 with one line") {
  SUBCASE("a server named but not there") {
    const Ran r = run({kGrade, "--dir", kGood, "--server", "http://127.0.0.1:1"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.rfind("cb-grade: no flaky server answers at http://127.0.0.1:1", 0) == 0);
  }
  SUBCASE("no such directory") {
    const Ran r = run({kGrade, "--dir", "/nonexistent/cb", "--record", kGood + "/record.json"});
    CHECK(r.exit_code == 2);
    CHECK(r.err == "cb-grade: /nonexistent/cb: cannot open the directory: No such file or directory\n");
  }
  SUBCASE("a bad format") {
    const Ran r = run({kGrade, "--dir", kGood, "--format", "yaml"});
    CHECK(r.exit_code == 2);
    CHECK(r.err == "cb-grade: --format: 'yaml' is not one of text, json, junit, gradescope, html, classroom\n");
  }
  SUBCASE("a step out of range") {
    const Ran r = run({kGrade, "--dir", kGood, "--step", "9"});
    CHECK(r.exit_code == 2);
  }
  SUBCASE("--record with --run") {
    const Ran r = run({kGrade, "--record", kGood + "/record.json", "--run", "true"});
    CHECK(r.exit_code == 2);
  }
}

TEST_CASE("cb-grade --step 1 needs no directory - a student asks it before writing a file") {
  flaky::ServerOptions o;
  o.port = 0;
  const auto server = flaky::FlakyServer::start(o).value();
  SUBCASE("step 1 alone: graded on the server") {
    const Ran r =
        run({kGrade, "--step", "1", "--server", server->url(), "--dir", "/nonexistent/cb", "--format", "json"});
    CHECK(r.exit_code == 0);
    INFO(r.out, r.err);
    CHECK(verdicts(r.out) == std::map<int, std::string>{{1, "pass"}});
  }
  SUBCASE("a step that reads a file still needs the directory") {
    const Ran r = run({kGrade, "--step", "1", "--step", "2", "--server", server->url(), "--dir", "/nonexistent/cb"});
    CHECK(r.exit_code == 2);
    CHECK(r.err == "cb-grade: /nonexistent/cb: cannot open the directory: No such file or directory\n");
  }
}

TEST_CASE("cb-grade: every format is well-formed") {
  const std::vector<std::string> base{kGrade, "--dir", kGood, "--record", kGood + "/record.json", "--format"};
  auto with = [&](const char* f) {
    auto argv = base;
    argv.emplace_back(f);
    return run(argv);
  };
  SUBCASE("json: the documented schema") {
    const Ran r = with("json");
    CHECK(r.exit_code == 0);
    const json j = json::parse(r.out);
    for (const char* key : {"score", "max_score", "passed", "steps"}) CHECK(j.contains(key));
    REQUIRE(j["steps"].size() == 8);
    for (const auto& s : j["steps"]) {
      for (const char* key : {"step", "title", "status", "score", "max_score", "checks"}) CHECK(s.contains(key));
      for (const auto& c : s["checks"])
        for (const char* key : {"name", "status", "message", "expected", "actual"}) CHECK(c.contains(key));
    }
  }
  SUBCASE("junit: XML a CI server reads") {
    const Ran r = with("junit");
    CHECK(r.exit_code == 0);
    TempDir t;
    t.write("r.xml", r.out);
    const std::string program =
        "import sys, xml.etree.ElementTree as E; s=E.parse(sys.argv[1]).getroot().find('testsuite');"
        "print(s.get('tests'), len(s.findall('testcase')), len(s.findall('testcase/failure')))";
    const Ran parsed = run({"/usr/bin/env", "python3", "-c", program, t / "r.xml"});
    CHECK(parsed.exit_code == 0);
    CHECK(parsed.out == "8 8 0\n");
  }
  SUBCASE("gradescope: results.json") {
    const Ran r = with("gradescope");
    const json j = json::parse(r.out);
    for (const char* key : {"score", "max_score", "tests", "execution_time"}) CHECK(j.contains(key));
    REQUIRE(j["tests"].size() == 8);
    for (const auto& t : j["tests"])
      for (const char* key : {"name", "number", "score", "max_score", "status", "output"}) CHECK(t.contains(key));
  }
  SUBCASE("text: a checklist - no colour when not on a terminal") {
    const Ran r = with("text");
    CHECK(r.out.find("Score 8/8") != std::string::npos);
    CHECK(r.out.find('\x1b') == std::string::npos);
  }
}

TEST_CASE("cb-grade: a failing step in junit is a failure - with the message") {
  const std::string dir = std::string(CB_FIXTURES) + "/submissions/slow-refusal";
  const Ran r = run({kGrade, "--dir", dir, "--record", dir + "/record.json", "--format", "junit"});
  CHECK(r.exit_code == 1);
  CHECK(r.out.find("failures=\"1\"") != std::string::npos);
  CHECK(r.out.find("<failure message=\"s4.max_ms: fastfail.txt: max_ms &lt; 50: max_ms=73 is not &lt; 50") !=
        std::string::npos);
}

TEST_CASE("cb-grade: -o writes the report to a file") {
  TempDir t;
  const Ran r =
      run({kGrade, "--dir", kGood, "--record", kGood + "/record.json", "--format", "json", "-o", t / "r.json"});
  CHECK(r.exit_code == 0);
  // The report is in the file; the terminal is told the verdict and where the report went.
  CHECK(r.out.rfind("Score 8/8: every step checked passed.", 0) == 0);
  CHECK(r.out.find("The report: " + (t / "r.json")) != std::string::npos);
  CHECK(json::parse(std::ifstream(t / "r.json"))["score"] == 8);
}

// A record handed to the grader that holds the lab twice is how it was taken (the person ran the
// lab again on a server they keep): not the grader's fault, and said once, not under every check.
TEST_CASE("cb-grade: a record of two runs is blamed on how it was taken, and said once") {
  const std::string dir = std::string(CB_FIXTURES) + "/submissions/two-runs";
  const Ran r = run({kGrade, "--dir", dir, "--record", dir + "/record.json"});
  CHECK(r.exit_code == 2);
  const auto count = [&](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count(r.out, "reset the server") == 1);
  CHECK(count(r.err, "reset the server") == 0);
  CHECK(r.out.find("the grader's fault") == std::string::npos);
  CHECK(r.out.find("NOT GRADED, the record given cannot be judged") != std::string::npos);
  // s6.trials was not judged, so its dependant does not quote what it found.
  CHECK(r.out.find("it stands on s6.trials, which was not judged either") != std::string::npos);
}

// Step 1 asks whether a server runs; a student who never started one is told how.
TEST_CASE("cb-grade --step 1: with no server it says how to start one") {
  if (skip_unless(!grade::fetch_record(flaky::default_url(), std::chrono::milliseconds(500)).ok(),
                  "a server answers on " + flaky::default_url() + " here"))
    return;
  const Ran r = run({kGrade, "--step", "1", "--dir", "/nonexistent"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("cb-grade: no flaky server answers at " + flaky::default_url(), 0) == 0);
  CHECK(r.err.find("; start one (cb-lab step 1 leaves one running, or run flaky-server), name another with --server, "
                   "or grade a whole run with --run\n") != std::string::npos);
}

// A program that never called the server (a typo in the command, a compile error) gets one
// headline with the cause, first, and a line a step; not a page of failed checks with the cause
// at the bottom, and not step 1's "the record holds one whole run" on an empty record.
TEST_CASE("cb-grade --run: a program that never called the server gets one headline, first") {
  TempDir out;
  const Ran json_run = grade_run(out, "sh runn.sh");
  CHECK(json_run.exit_code == 1);
  const json report = json::parse(json_run.out);
  CHECK(report["headline"] ==
        "Your program exited with 2 before calling the server: sh: 0: cannot open runn.sh: No "
        "such file");
  CHECK(report["steps"][0]["checks"][1]["id"] == "s1.once");
  CHECK(report["steps"][0]["checks"][1]["status"] == "fail");
  const Ran text = run({kGrade, "--run", "sh runn.sh", "--submission", kStudents, "--dir", out.path(), "--any-port"});
  std::istringstream lines(text.out);
  std::string line;
  std::vector<std::string> first;
  while (first.size() < 4 && std::getline(lines, line))
    if (!line.empty()) first.push_back(line);
  REQUIRE(first.size() == 4);
  CHECK(first[2].rfind("Your program exited with 2 before calling the server: sh: 0: cannot open runn.sh", 0) == 0);
  CHECK(first[3].rfind("Step 1  ", 0) == 0);
  CHECK(text.out.find("[s1.") == std::string::npos);  // no check listed: the headline said it
}

TEST_CASE("cb-grade --batch: a class at once - into one gradebook") {
  TempDir root;
  std::filesystem::copy(kGood, root / "alice");
  std::filesystem::create_directory(root / "bob");  // handed in nothing
  std::filesystem::copy(std::string(CB_FIXTURES) + "/submissions/counts-4xx", root / "carol");
  // Each graded with --run runs its own program, from its own folder.
  for (const char* name : {"alice", "bob", "carol"})
    std::filesystem::copy_file(kStudents + "/" + kStudent, root / (std::string(name) + "/breaker.py"));
  SUBCASE("files only: CSV") {
    const Ran r = run({kGrade, "--batch", root.path()});
    CHECK(r.exit_code == 1);
    CHECK(r.out.rfind("submission,status,score,max_score,passed,step1,step1_check,step1_message,step2,", 0) == 0);
    CHECK(r.out.find("\nalice,graded,") != std::string::npos);
    CHECK(r.out.find("\nbob,graded,") != std::string::npos);
    // Files alone: steps judged on the record are skipped, and step 7 names the check that failed.
    CHECK(std::regex_search(
        r.out, std::regex("\ncarol,graded,[0-9.]+,8,false,skip,[^,]*,[^,]*,skip,[^,]*,[^,]*,skip,[^,]*,[^,]*,pass,,,"
                          "pass,,,pass,,,fail,s7\\.[a-z_]+,[^\n]*\n")));
  }
  SUBCASE("a row that cannot be graded says why, in its error column") {
    // No --run, and the files are said to be in out/, which no submission has.
    const Ran r = run({kGrade, "--batch", root.path(), "--batch-files", "out"});
    CHECK(r.exit_code == 1);
    CHECK(std::regex_search(r.out, std::regex("\nalice,error,0,8,false,[^\n]*,[^,\n]*alice/out[^,\n]*\n")));
  }
  SUBCASE("a progress line on a terminal; in a pipe, the -j it took, then only the summary at the end") {
    // script(1) gives the grader a terminal; its standard error is then the typescript.
    TempDir out;
    const Ran tty = run({"/usr/bin/script", "-qec",
                         "'" + kGrade + "' --batch '" + root.path() + "' -o '" + out / "book.csv'", "/dev/null"});
    CHECK(std::regex_search(tty.out, std::regex("\\[3/3\\] 0:[0-9]{2} elapsed, about 0:00 to go")));
    const Ran piped = run({kGrade, "--batch", root.path(), "-o", out / "book.csv"});
    CHECK(std::regex_match(piped.err, std::regex("cb-grade: 3 submissions, [0-9]+ at a time \\(-j [0-9]+: [^\n]*\\)\n"
                                                 "cb-grade: 3 submissions in 0:[0-9]{2}: 3 graded \\([0-9] passed\\)\n"
                                                 "cb-grade: the gradebook's digest: [0-9a-f]{64} \\(3 rows; in "
                                                 "[^\n]*/book\\.csv\\.digest\\)\n")));
  }
  SUBCASE("with --run: each on a server of its own - in parallel - as JSON") {
    const Ran r = run({kGrade, "--batch", root.path(), "--batch-files", "out", "--run", "python3 breaker.py",
                       "--format", "json", "-j", "2"});
    INFO(r.out, r.err);
    const json book = json::parse(r.out);
    REQUIRE(book.size() == 3);
    for (const auto& row : book) {
      CAPTURE(row["submission"].get<std::string>());
      CHECK(row["passed"] == true);
      CHECK(row["score"] == 8);
    }
    CHECK(r.exit_code == 0);
  }
  SUBCASE("with --run and a relative ROOT: each program writes where its files are graded") {
    // The programs run inside their submissions; CB_DIR must still name the graded directory.
    const Ran r = run({"/bin/sh", "-c",
                       "cd '" + root.path() + "/..' && exec '" + kGrade + "' --batch '" +
                           std::filesystem::path(root.path()).filename().string() +
                           "' --batch-files out --run 'python3 breaker.py' --format json -j 2"});
    INFO(r.out, r.err);
    const json book = json::parse(r.out);
    REQUIRE(book.size() == 3);
    for (const auto& row : book) CHECK(row["score"] == 8);
  }
}

}  // namespace
}  // namespace cb::testing
