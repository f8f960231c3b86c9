// CPU is shared by box, not by process or session: a classmate's busy loops cannot slow a right
// program beside it. Its own program, run alone (RUN_SERIAL): the classmate it grades is 124 busy
// loops, one more always-runnable share on the machine for as long as it runs, which is the
// load the tests beside it would otherwise have to bear.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "../kits/kits.h"
#include "grading.h"
#include "skip.h"

namespace cb::testing {
namespace {

using namespace grading;  // NOLINT(google-build-using-namespace): the harness of every case here

// A classmate that stays within every limit of its box but starts 124 busy loops, each in a
// session of its own: the kernel shares CPU by session (autogroup), so without a cpu group per
// box it took 124 shares to its classmate's one, and a right Java kit beside it (a JVM start is
// most of a CPU-second) timed out (0/8; 8/8 alone). With one, each box is one share, however many
// sessions it makes.
TEST_CASE("kits in the box: a classmate of 124 busy sessions takes no more CPU than its share") {
  // Only root's boxes have a group on cgroup v1: run by anyone else, nothing here can run.
  if (cb::testing::skip_unless(am_root(), "not root: an ordinary user gets no control group to divide on cgroup v1"))
    return;
  const Kit* java = nullptr;
  for (const Kit& kit : all_kits())
    if (kit.lang == "java") java = &kit;
  REQUIRE(java != nullptr);
  for (const Setup& s : setups()) {
    if (!s.root) {
      MESSAGE("skipped for " << s.name() << ": an ordinary user gets no control group to divide on cgroup v1");
      continue;
    }
    SUBCASE(s.name().c_str()) {
      TempDir root;
      fs::create_directories(root / "a-hog");
      std::ofstream(root / "a-hog/run.sh")
          << "i=0\nwhile [ $i -lt 124 ]; do setsid sh -c 'while :; do :; done' & i=$((i + 1)); done\nsleep 60\n";
      REQUIRE(run({CB_LAB_BIN, "init", root / "b-right", "--lang", "java"}).exit_code == 0);
      std::ofstream(root / ("b-right/" + java->rules)) << reference_rules(*java);
      hand_over(root.path(), s, false);
      // Both at once; the classmate's run is ended at its time limit (20 s), and a right kit that
      // had to wait for it ran out of its own (it waited 39 s where alone it takes 5).
      const auto ran = run(
          as(s, {grader_for(s), "class", root.path(), "--run", "sh run.sh", "--conformance", "sh replay.sh", "--traces",
                 "50", "--seed", "5", "--timeout", "20s", "--sandbox", s.mode, "-j", "2", "--format", "json"}),
          "", {}, std::chrono::seconds{240});
      INFO(ran.out, ran.err);
      const json book = json::parse(ran.out, nullptr, false);
      REQUIRE(book.is_array());
      REQUIRE(book.size() == 2);
      const json& right = book[1];
      CHECK(right["submission"] == "b-right");
      CHECK(right["score"] == right["max_score"]);
    }
  }
}

}  // namespace
}  // namespace cb::testing
