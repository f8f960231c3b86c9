// What is graded is what the lab run left, and what is kept (and regraded) is what was graded:
// a program of the same submission that runs later in the box cannot change it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "grading.h"
#include "process.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using namespace grading;  // NOLINT(google-build-using-namespace): the harness of every case here

TEST_CASE("evidence: the conformance programs cannot rewrite the lab's files that are kept and regraded") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      TempDir root;
      fs::create_directories(root / "mallory");
      fs::copy_file(kAttacks + "/evidence_swap_run.sh", root / "mallory/run.sh");
      fs::copy_file(kAttacks + "/evidence_swap_replay.sh", root / "mallory/replay.sh");
      fs::copy_file(kStudents + "/good_breaker.py", root / "mallory/breaker.py");
      hand_over(root.path(), s, false);
      TempDir reports;
      hand_over(reports.path(), s, true);
      const Ran batch = run(as(s, {grader_for(s), "--batch", root.path(), "--batch-files", "out", "--run", "sh run.sh",
                                   "--conformance", "sh replay.sh", "--traces", "5", "--sandbox", s.mode, "--reports",
                                   reports.path(), "--format", "json"}),
                            "", {}, std::chrono::seconds{120});
      INFO(batch.out, batch.err);
      const json book = json::parse(batch.out, nullptr, false);
      REQUIRE(book.is_array());
      REQUIRE(book.size() == 1);
      const double graded = book[0]["score"].get<double>();
      CHECK(graded < 8);  // its state.json was spoiled
      // What was kept is what was graded.
      CHECK(slurp(reports / "mallory/files/state.json").find("BROKEN") != std::string::npos);
      const Ran again = run(as(s, {grader_for(s), "--regrade", reports.path(), "--format", "json"}));
      INFO(again.out, again.err);
      const json regraded = json::parse(again.out, nullptr, false);
      REQUIRE(regraded.is_array());
      CHECK(regraded[0]["score"].get<double>() == graded);
    }
  }
}

TEST_CASE("evidence: connections reset before they are accepted cannot make a double run ungradable") {
  // Where the program has a uid of its own (root) its connections are told from any other's; an
  // ordinary user's fallback cannot tell, and says so.
  for (const Setup& s : setups()) {
    if (!s.root) continue;
    SUBCASE(s.name().c_str()) {
      Submission sub(s, {"reset_storm.py"}, true);
      TempDir out;
      const Graded g = grade(s, sub, out, "python3 reset_storm.py");
      INFO(g.ran.out, g.ran.err);
      check_containment(s, g);
      CHECK(g.ran.exit_code == 1);  // graded, and failed: not "NOT graded" (2)
      REQUIRE(g.attack.is_object());
      CHECK(g.attack["reset"].get<int>() > 0);
      const json& step1 = g.report["steps"][0];
      for (const auto& check : step1["checks"])
        if (check["id"] == "s1.once") CHECK(check["status"] == "fail");
    }
  }
}

// The most memory `pid` has had (VmHWM, KiB), sampled until it has exited (a zombie, not yet
// waited for, shows none) or two minutes pass; 0 if it could never be read.
long peak_kib(pid_t pid) {
  long peak = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes{2};
  while (std::chrono::steady_clock::now() < until) {
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    bool read = false;
    while (std::getline(status, line))
      if (line.rfind("VmHWM:", 0) == 0) {
        peak = std::max(peak, std::stol(line.substr(6)));
        read = true;
      }
    if (!read) break;
    std::this_thread::sleep_for(std::chrono::milliseconds{20});
  }
  return peak;
}

TEST_CASE("evidence: a flood of connections that never read their answers cannot grow the grader") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      Submission sub(s, {"flood.py"});
      TempDir out;
      hand_over(out.path(), s, true);
      Process grader(as(s, {grader_for(s), "--run", "python3 flood.py", "--submission", sub.dir.path(), "--dir",
                            out.path(), "--sandbox", s.mode, "--format", "json"}));
      const long kib = peak_kib(grader.pid());
      const std::string out_text = grader.read_rest_of_stdout();
      grader.wait();
      INFO(out_text);
      const json report = json::parse(out_text, nullptr, false);
      REQUIRE(report.is_object());
      REQUIRE(attack_line(report["run_output"]).is_object());
      CHECK(attack_line(report["run_output"])["held"].get<int>() > 1000);
      MESSAGE("cb-grade peak: " << kib << " KiB");
      CHECK(kib > 0);
      // A sanitizer's shadow and quarantine are memory of their own: the bound is the release's
      // and the debug build's.
      if (CB_SANITIZED == 0) CHECK(kib < 64 * 1024);
    }
  }
}

}  // namespace
}  // namespace cb::testing
