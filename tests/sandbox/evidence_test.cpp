// What is graded is what the lab run left, and what is kept (and regraded) is what was graded:
// a program of the same submission that runs later in the box cannot change it.
#include <doctest/doctest.h>

#include <filesystem>

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
                                   "--conformance", "sh replay.sh", "--traces", "5", "--sandbox", s.mode,
                                   "--reports", reports.path(), "--format", "json"}),
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

}  // namespace
}  // namespace cb::testing
