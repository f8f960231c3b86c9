// The course key makes every student's numbers: a grader that runs programs refuses a key they
// could read (in the folder handed in, in a folder they see as the grader's own uid, or readable
// by every user), and grades with one kept where only its own user may read it.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grading.h"
#include "process.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using namespace grading;  // NOLINT(google-build-using-namespace): the harness of every case here

constexpr const char* kKey = "0123456789abcdef0123456789abcdef\n";

Ran grade_with_key(const Setup& s, const Submission& sub, const std::string& key) {
  TempDir out;
  hand_over(out.path(), s, true);
  return run(as(s, {grader_for(s), "--run", "python3 breaker.py", "--submission", sub.dir.path(), "--dir", out.path(),
                    "--sandbox", s.mode, "--format", "json", "--student", "ada", "--course-key", key}));
}

TEST_CASE("secrets: a course key the graded programs could read is refused, one kept apart is used") {
  for (const Setup& s : setups()) {
    SUBCASE((s.name() + ": in the folder handed in").c_str()) {
      Submission sub(s, {}, true);
      sub.dir.write("course.key", kKey);
      hand_over(sub.dir.path(), s, false);
      const Ran r = grade_with_key(s, sub, sub.dir / "course.key");
      INFO(r.out, r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("could be read by the programs it grades: it is in the folder handed in") != std::string::npos);
    }
    SUBCASE((s.name() + ": readable by every user, in a folder the box does not show").c_str()) {
      Submission sub(s, {}, true);
      TempDir keys;
      keys.write("course.key", kKey);
      ::chmod((keys / "course.key").c_str(), 0644);
      ::chmod(keys.path().c_str(), 0755);
      const Ran r = grade_with_key(s, sub, keys / "course.key");
      INFO(r.out, r.err);
      CHECK(r.exit_code == 2);
      CHECK(r.err.find("could be read by the programs it grades: every user may read it") != std::string::npos);
    }
    SUBCASE((s.name() + ": kept where only the grader's user may read it").c_str()) {
      Submission sub(s, {}, true);
      TempDir keys;
      keys.write("course.key", kKey);
      ::chmod((keys / "course.key").c_str(), 0600);
      ::chmod(keys.path().c_str(), 0700);
      if (!s.root && am_root()) {
        (void)::chown((keys / "course.key").c_str(), user_id(), user_id());
        (void)::chown(keys.path().c_str(), user_id(), user_id());
      }
      const Ran r = grade_with_key(s, sub, keys / "course.key");
      INFO(r.out, r.err);
      CHECK(r.err.find("course-key") == std::string::npos);
      const json report = json::parse(r.out, nullptr, false);
      REQUIRE(report.is_object());
      CHECK(r.exit_code != 2);  // graded (on ada's numbers, which this breaker does not read)
      CHECK(report["max_score"] == 8);
    }
  }
}

}  // namespace
}  // namespace cb::testing
