// cb-grade --run against hostile programs: it cannot reset or rewrite the record it is graded
// on, and nothing it starts outlives the grader (not setsid, not a double fork), in the full
// sandbox (a PID namespace of its own) and in the fallback (the grader as child subreaper).
#include <doctest/doctest.h>
#include <dirent.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "process.h"
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
      const std::string command =
          "setsid sleep " + marker + " & "
          "(setsid sh -c 'touch \"$CB_DIR/second\"; exec sleep " + marker + "' &) ; "
          "( ( sleep " + marker + " & ) & ) ; "
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
  submission.write("reset.py",
            "import os, urllib.request, urllib.error\n"
            "for method, path in (('POST', '/admin/reset'), ('GET', '/admin/record')):\n"
            "    try:\n"
            "        urllib.request.urlopen(urllib.request.Request(os.environ['CB_SERVER'] + path, method=method), timeout=2)\n"
            "        print('admin', path, 'answered')\n"
            "    except urllib.error.HTTPError as e:\n"
            "        print('admin', path, e.code)\n");
  // Calls leak through OPEN, then the program tries to erase them; the record keeps them.
  const Ran r = run({kGrade, "--run", "python3 good_breaker.py leak; python3 reset.py", "--submission", submission.path(),
                     "--dir", out.path(), "--any-port", "--format", "json"});
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

}  // namespace
}  // namespace cb::testing
