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

}  // namespace
}  // namespace cb::testing
