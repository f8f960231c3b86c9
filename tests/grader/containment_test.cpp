// cb-grade --run against hostile programs: it cannot reset or rewrite the record it is graded
// on, and nothing it starts outlives the grader (not setsid, not a double fork), in the full
// sandbox (a PID namespace of its own) and in the fallback (the grader as child subreaper).
#include <doctest/doctest.h>
#include <dirent.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "process.h"
#include "report_json.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;

const std::string kGrade = CB_GRADE_BIN;
const std::string kStudents = std::string(CB_FIXTURES) + "/students";

// Processes on this machine whose command line contains `marker`.
int processes_with(const std::string& marker) {
  int n = 0;
  DIR* proc = ::opendir("/proc");
  REQUIRE(proc != nullptr);
  while (const dirent* d = ::readdir(proc)) {
    if (std::atoi(d->d_name) <= 0) continue;
    std::ifstream f(std::string("/proc/") + d->d_name + "/cmdline", std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    std::string cmd = ss.str();
    for (char& c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find(marker) != std::string::npos && cmd.find("cb-grade") == std::string::npos) ++n;
  }
  ::closedir(proc);
  return n;
}

std::vector<std::string> modes() { return {"auto", "fallback"}; }

TEST_CASE("cb-grade --run: nothing the program started outlives the grader") {
  for (const std::string& mode : modes()) {
    SUBCASE(mode.c_str()) {
      TempDir out;
      // Each survivor says it is alive (a file) before the command ends, so the grader surely
      // had something to kill; their sleeps carry a marker no other process has.
      const std::string marker = "1007." + std::to_string(::getpid()) + (mode == "auto" ? "1" : "2");
      const std::string command = "setsid sleep " + marker +
                                  " & "
                                  "(setsid sh -c 'touch \"$CB_DIR/second\"; exec sleep " +
                                  marker +
                                  "' &) ; "
                                  "( ( sleep " +
                                  marker +
                                  " & ) & ) ; "
                                  "while [ ! -e \"$CB_DIR/second\" ]; do :; done; python3 good_breaker.py";
      const Ran r = run({kGrade, "--run", command, "--submission", kStudents, "--sandbox", mode, "--dir", out.path(),
                         "--any-port", "--format", "json", "-o", out / "report.json"});
      // Graded (0 or 1: under a loaded sanitizer build the busy loop above can slow the lab's
      // refusals past a check's limit; what this test is about is below).
      CHECK((r.exit_code == 0 || r.exit_code == 1));
      CAPTURE(r.err);
      // cb-grade has exited: every process the command started is gone already.
      CHECK(processes_with("sleep " + marker) == 0);
    }
  }
}

TEST_CASE("cb-grade --run: a program cannot reset the record it is graded on") {
  TempDir out;
  TempDir submission;
  std::filesystem::copy_file(kStudents + "/good_breaker.py", submission / "good_breaker.py");
  submission.write(
      "reset.py",
      "import os, urllib.request, urllib.error\n"
      "for method, path in (('POST', '/admin/reset'), ('GET', '/admin/record')):\n"
      "    try:\n"
      "        urllib.request.urlopen(urllib.request.Request(os.environ['CB_SERVER'] + path, method=method), timeout=2)\n"
      "        print('admin', path, 'answered')\n"
      "    except urllib.error.HTTPError as e:\n"
      "        print('admin', path, e.code)\n");
  // Calls leak through OPEN, then the program tries to erase them; the record keeps them.
  const Ran r = run({kGrade, "--run", "python3 good_breaker.py leak; python3 reset.py", "--submission",
                     submission.path(), "--dir", out.path(), "--any-port", "--format", "json"});
  CHECK(r.exit_code == 1);
  const json report = json::parse(r.out);
  CHECK(report["status"] == "fail");
  CHECK(report["evidence"]["runs"] == 1);
  CHECK(report["evidence"]["epoch"] == 1);
  const auto& step1 = report["steps"][0];
  CHECK(step1["status"] == "fail");
  bool named = false;
  for (const auto& c : step1["checks"])
    if (c["id"] == "s1.admin") named = c["message"].get<std::string>().find("POST /admin/reset") != std::string::npos;
  CHECK(named);
  CHECK(report["steps"][3]["status"] == "fail");  // the leaked calls are still in the record
  CHECK(r.out.find("admin /admin/reset 403") != std::string::npos);
}

TEST_CASE("cb-grade --run: a program that runs the lab twice is graded, and fails step 1 for it") {
  // Its server is its own (its own network, or only its uid served), so the second run can only
  // be its doing: a mistake with a score, not evidence that failed.
  TempDir out;
  const Ran r = run({kGrade, "--run", "python3 good_breaker.py; python3 good_breaker.py", "--submission", kStudents,
                     "--dir", out.path(), "--format", "json"});
  INFO(r.out, r.err);
  CHECK(r.exit_code == 1);
  const json report = json::parse(r.out);
  CHECK(report["status"] == "fail");
  CHECK(report["evidence"]["runs"] == 2);
  CHECK(report["evidence"]["private_server"] == true);
  CHECK(report["evidence"]["problem"].is_null());
  const json once = checks_by_id(report)["s1.once"];
  CHECK(once["status"] == "fail");
  CHECK(once["message"].get<std::string>().find("the record holds 2 runs of the lab (the 2nd begins at request #") ==
        0);
  CHECK(once["message"].get<std::string>().find("run it once") != std::string::npos);
  CHECK(report["steps"][0]["status"] == "fail");
  // What stood on the record is not judged on it, and says why; the files are still judged.
  const auto& step3 = report["steps"][2];
  for (const auto& c : step3["checks"]) {
    CAPTURE(c);
    if (c["id"] == "s3.trip") {
      CHECK(c["status"] == "skip");
      CHECK(c["message"].get<std::string>().find("not judged on the record: the record holds 2 runs") == 0);
    }
  }
  // The files are judged and shown (transitions.log, from the second run, is right), but earn
  // nothing where the record was the step's judge: running twice is no way out of its checks.
  CHECK(report["steps"][7]["checks"][1]["id"] == "s8.order");
  CHECK(report["steps"][7]["checks"][1]["status"] == "pass");
  CHECK(report["steps"][7]["status"] == "skip");
  CHECK(report["score"] == 0);
}

TEST_CASE(
    "cb-grade --run: two runs in the fallback, where only the program's uid is served, and with no sandbox not graded") {
  TempDir submission;
  // The shortest record of two runs: a /fast after the /bad of the first.
  submission.write("twice.py",
                   "import os, urllib.request, urllib.error\n"
                   "for path in ('/fast', '/bad', '/fast'):\n"
                   "    try:\n"
                   "        urllib.request.urlopen(os.environ['CB_SERVER'] + path, timeout=5).read()\n"
                   "    except urllib.error.HTTPError:\n"
                   "        pass\n");
  // twice.py graded with --run in `sandbox`, reported as `format`.
  const auto grade_twice = [&](const std::string& sandbox, const std::string& format) {
    TempDir out;
    return run({kGrade, "--run", "python3 twice.py", "--submission", submission.path(), "--sandbox", sandbox,
                "--any-port", "--dir", out.path(), "--format", format});
  };
  if (::geteuid() == 0) {  // a uid of its own only when the grader is root
    const Ran r = grade_twice("fallback", "json");
    INFO(r.out, r.err);
    CHECK(r.exit_code == 1);
    const json report = json::parse(r.out);
    CHECK(report["evidence"]["private_server"] == true);
    CHECK(checks_by_id(report)["s1.once"]["status"] == "fail");
    // JUnit carries the same, for a CI server's reader.
    const Ran junit = grade_twice("fallback", "junit");
    CHECK(junit.exit_code == 1);
    CHECK(junit.out.find("<property name=\"private_server\" value=\"true\"/>") != std::string::npos);
    CHECK(junit.out.find("<property name=\"foreign_connections\" value=\"0\"/>") != std::string::npos);
  }
  // Run as the grader itself, on the machine's network, the second run could be anyone's.
  const Ran r = grade_twice("none", "json");
  INFO(r.out, r.err);
  CHECK(r.exit_code == 2);
  const json report = json::parse(r.out);
  CHECK(report["evidence"]["private_server"] == false);
  CHECK(report["evidence"]["problem"].get<std::string>().find(
            "either the program ran the lab twice or another program on this machine reached the server") !=
        std::string::npos);
  CHECK(checks_by_id(report)["s1.once"]["status"] == "error");
}

}  // namespace
}  // namespace cb::testing
