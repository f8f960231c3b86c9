// The kits whose programs are the heaviest to start, a JVM and the Go toolchain, graded in every
// setup the grader runs in (root or an ordinary user; the full sandbox or the fallback) under the
// default limits: built in the box, the lab run and the conformance traces, full marks.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "../kits/kits.h"
#include "grading.h"

namespace cb::testing {
namespace {

using namespace grading;

TEST_CASE("kits in the box: the Java and Go kits build and score full marks in every setup, under the default limits") {
  for (const Kit& kit : all_kits()) {
    const std::string lang = kit.lang;
    if (lang != "java" && lang != "go") continue;
    for (const Setup& s : setups()) {
      SUBCASE((lang + ", " + s.name()).c_str()) {
        Submission sub(s, {});
        REQUIRE(run({CB_LAB_BIN, "init", sub.dir.path(), "--lang", lang, "--force"}).exit_code == 0);
        std::ofstream(sub.dir / kit.rules) << reference_rules(kit);
        hand_over(sub.dir.path(), s, false);
        TempDir out;
        const Graded g =
            grade(s, sub, out, "sh run.sh", {"--conformance", "sh replay.sh", "--seed", "12", "--traces", "50"});
        INFO(g.ran.out, g.ran.err);
        check_containment(s, g);
        CHECK(g.report["score"] == g.report["max_score"]);
        CHECK(g.report["conformance"]["agreed"] == 50);
        // Built in the box, never in the folder handed in.
        CHECK_FALSE(fs::exists(sub.dir / ".built"));
        CHECK_FALSE(fs::exists(sub.dir / ".classes"));
      }
    }
  }
}

}  // namespace
}  // namespace cb::testing
