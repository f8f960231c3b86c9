// Whose fault a failure is: the grader's own (it stalled, no box could be made) is never a grade.
// A grader stopped while its programs run leaves them calling a server that does not answer, and
// timing nothing: such a run is graded again, and the report says why.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include <sys/stat.h>
#include <unistd.h>

#include "process.h"
#include "../kits/kits.h"
#include "skip.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;

// Whether one of the grader's kits has its lab run under way (its run.sh running), within a
// bound. Only the grader's own processes count: a kit's run.sh of a test running beside this one
// would have it stop the grader before any run began, and find nothing to grade again.
bool lab_run_started(pid_t grader, std::chrono::seconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < until) {
    for (const auto& [pid, cmd] : process_tree_command_lines(grader))
      if (cmd.find("run.sh") != std::string::npos && cmd.find(CB_GRADE_BIN) == std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  return false;
}

TEST_CASE("whose fault: a grader stopped in the middle of a batch grades its right programs again, to full marks") {
  TempDir dir;
  const std::string root = dir / "cls";
  // Every kit, with its reference rules, built as its README asks.
  for (const Kit& kit : all_kits()) make_kit(root + "/" + kit.lang, kit, reference_rules(kit));
  Process grader({CB_GRADE_BIN, "--batch", root, "--run", "sh run.sh", "--timeout", "60s", "-j", "2", "--reports",
                  dir / "reports", "-o", dir / "book.json"});
  REQUIRE(lab_run_started(grader.pid(), std::chrono::seconds{60}));
  // Stopped from a second into the run for ten: over the cool-down's end, so the trials and the
  // 4xx calls go unanswered past their 2 s timeout (before the stall was seen, right kits got
  // 6 of 8 so: "HALF_OPEN->OPEN").
  std::this_thread::sleep_for(std::chrono::seconds{1});
  grader.signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::seconds{10});
  grader.signal(SIGCONT);
  const auto rc = grader.wait(std::chrono::seconds{240});
  const std::string err = grader.read_all_stderr();
  INFO(err);
  REQUIRE(rc.value_or(-1) == 0);
  std::map<std::string, json> rows;
  for (const json& r : json::parse(std::ifstream(dir / "book.json"))) rows[r["submission"].get<std::string>()] = r;
  REQUIRE(rows.size() == all_kits().size());
  int graded_again = 0;
  for (const auto& entry : rows) {
    const std::string& name = entry.first;  // not a structured binding: INFO captures it
    const json& row = entry.second;
    INFO(name, row.dump());
    CHECK(row["status"] == "graded");
    CHECK(row["score"] == row["max_score"]);
    const json report = json::parse(std::ifstream(dir / ("reports/" + name + "/report.json")));
    for (const json& note : report["notes"])
      if (note.get<std::string>().find("Graded again: an earlier try failed through the grader's fault") == 0 &&
          note.get<std::string>().find("the grader stalled for ") != std::string::npos)
        ++graded_again;
  }
  CHECK(graded_again >= 1);  // the one that was running, at least
}

// A folder that is not there, or that does not fit in its box, is the submission's: said once,
// never tried again as if the grader had failed (it was tried three times, "grading again").
TEST_CASE("whose fault: a submission folder that cannot be boxed is said at once, not tried again") {
  TempDir dir;
  std::filesystem::create_directories(dir / "big");
  dir.write("big/blob", std::string(2 << 20, 'x'));
  for (const auto& [folder, said] :
       {std::pair{dir / "not-there", std::string(": the submission: No such file or directory")},
        std::pair{dir / "big", std::string("the submission does not fit in its box (1 MiB")}}) {
    const Ran r =
        run({CB_GRADE_BIN, "--run", "true", "--submission", folder, "--dir", dir / "out", "--limit-box-size", "1M"});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(said) != std::string::npos);
    CHECK(r.err.find("grading again") == std::string::npos);
    CHECK(r.err.find("tried") == std::string::npos);
  }
}

// What a program does inside its box stays its own: spinning on every core (a fork of busy
// loops) must not look like the grader stalling, or a program could turn its own 0 into "not
// graded, the grader's fault" and be graded again and again.
TEST_CASE("whose fault: a program that spins every core in its box is graded, not taken for a grader's stall") {
  TempDir dir;
  std::filesystem::create_directories(dir / "sub");
  dir.write("sub/spin.sh", "i=0\nwhile [ $i -lt 60 ]; do (while :; do :; done) & i=$((i+1)); done\nsleep 4\nkill 0\n");
  const Ran r =
      run({CB_GRADE_BIN, "--run", "sh spin.sh", "--submission", dir / "sub", "--dir", dir / "out", "--format", "json"});
  INFO(r.err);
  CHECK(r.exit_code == 1);  // graded: it never called the server
  CHECK(r.err.find("stalled") == std::string::npos);
  CHECK(r.err.find("grading again") == std::string::npos);
  const json report = json::parse(r.out);
  CHECK(report["score"] == 0);
}

// A Java program that printed nothing and was killed at the time limit left no word of why (0/8,
// and nobody could say where it hung). Asked for its stacks first, it says where it was.
TEST_CASE("whose fault: a program killed at the time limit is asked for its stacks first, and a JVM gives them") {
  if (skip_unless(std::filesystem::exists("/usr/bin/java"), "no java here")) return;
  TempDir dir;
  std::filesystem::create_directories(dir / "sub");
  dir.write("sub/Hang.java",
            "class Hang {\n  public static void main(String[] a) throws Exception {\n    waitForever();\n  }\n"
            "  static void waitForever() throws Exception { Thread.sleep(600_000); }\n}\n");
  const Ran r = run({CB_GRADE_BIN, "--run", "java Hang.java", "--submission", dir / "sub", "--dir", dir / "out",
                     "--timeout", "8s", "--format", "json"});
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == 1);
  const json report = json::parse(r.out);
  CHECK(report["program"]["timed_out"] == true);
  const std::string said = report.value("run_output", "");
  CHECK(said.find("Full thread dump") != std::string::npos);
  CHECK(said.find("at Hang.waitForever(Hang.java:5)") != std::string::npos);
}

// This process's folder in the cgroup v1 memory hierarchy, or empty where there is none.
std::string own_memory_group_v1() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find(":memory:");
    if (at == std::string::npos) continue;
    const std::string dir = "/sys/fs/cgroup/memory" + line.substr(at + 8);
    return std::filesystem::exists(dir + "/memory.limit_in_bytes") ? dir : std::string();
  }
  return {};
}

// A batch job's memory limit (Slurm's --mem, a container's) around the grader: a program killed
// by it while its box was within its own limit did nothing wrong. Five students once got 0 for
// "the memory limit (2 GiB for the whole box)" when their compiler was killed so.
TEST_CASE("whose fault: a program killed by a memory limit around the grader is not graded, and it is the grader's") {
  if (skip_unless(::geteuid() == 0, "not root: the test puts the grader in a memory group of its own")) return;
  const std::string own = own_memory_group_v1();
  if (skip_unless(!own.empty(), "no cgroup v1 memory hierarchy here to set a job's limit in")) return;
  // A sanitized grader holds more than the job's 192 MiB itself, and is the one the kernel kills.
  if (skip_unless(CB_SANITIZED == 0, "a sanitized grader does not fit in the job's limit it sets")) return;
  TempDir dir;
  const std::string outer = own + "/cb-test-job-" + std::to_string(::getpid());
  REQUIRE(::mkdir(outer.c_str(), 0755) == 0);
  std::ofstream(outer + "/memory.limit_in_bytes") << (192 << 20);
  std::filesystem::create_directories(dir / "sub");
  dir.write("sub/hog.py", "b = b'x' * (400 << 20)  # within the box's 2 GiB, beyond the job's 192 MiB\n");
  const Ran r = run({"/bin/sh", "-c", "echo $$ > '" + outer + "/cgroup.procs' && exec \"$@\"", "sh", CB_GRADE_BIN,
                     "--run", "python3 hog.py", "--submission", dir / "sub", "--dir", dir / "out", "--format", "json"});
  ::rmdir((outer + "/cb-grade").c_str());
  ::rmdir(outer.c_str());
  INFO(r.out, r.err);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("not graded: the program was killed for memory by a memory limit outside the box") !=
        std::string::npos);
  CHECK(r.err.find("(tried 3 times)") != std::string::npos);
  CHECK(r.out.find("\"score\"") == std::string::npos);  // no grade at all
}

}  // namespace
}  // namespace cb::testing
