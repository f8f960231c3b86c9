// What a program does inside its box's limits stays the program's: a breaker whose processes fill
// the box to its process limit, while the grader starts more of its programs there, gets its own
// verdict, never a grading the grader calls its own failure and throws away.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../kits/kits.h"
#include "grading.h"

namespace cb::testing {
namespace {

using namespace grading;  // NOLINT(google-build-using-namespace): the harness of every case here

// Before, the kernel's refusal of the next program's exec (EAGAIN: the box's uid already ran its
// limit) was taken for the grader's: graded again, three times, then "not graded" with no report,
// and the lab's failed steps went uncharged with it.
TEST_CASE("sandbox: a breaker that fills its box with processes gets its own 0, the lab's charges with it") {
  const Kit& python = kit_of("python");
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      TempDir root;
      const std::string kit = root / "kit";
      make_kit(kit, python, with_mistake(python, "gt"));
      fs::copy_file(kAttacks + "/box_full_replay.py", kit + "/box_full_replay.py");
      hand_over(root.path(), s, false);
      TempDir out;
      hand_over(out.path(), s, true);
      std::vector<std::string> argv{grader_for(s), "--submission", kit, "--sandbox", s.mode, "--format", "json"};
      argv.insert(argv.end(), {"--run", "sh run.sh", "--dir", out.path(), "--limit-processes", "32"});
      argv.insert(argv.end(), {"--conformance", "python3 box_full_replay.py", "-j", "8", "--traces", "60"});
      argv.insert(argv.end(), {"--seed", "5"});
      const auto ran = run(as(s, argv), "", {}, std::chrono::seconds{180});
      INFO(ran.out, ran.err);
      CHECK(ran.exit_code == 1);
      CHECK(ran.err.find("grading again") == std::string::npos);
      const json report = json::parse(ran.out, nullptr, false);
      REQUIRE(report.is_object());
      CHECK(report["conformance"]["status"] == "fail");
      // The lab's own mistake (the breaker opens a failure late) is charged beside it.
      bool step_failed = false;
      for (const json& step : report["steps"]) step_failed = step_failed || step["status"] == "fail";
      CHECK(step_failed);
    }
  }
}

}  // namespace
}  // namespace cb::testing
