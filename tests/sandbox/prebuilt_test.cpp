// A copy of the project's own programs in a submission is not the student's breaker: replay.sh
// that runs a copied cb-lab (`cb-lab conform`, the engine on the conformance protocol) fails
// the conformance part with that reason, under any name; and a rubric may refuse every
// executable handed in, so that programs are built from their sources in the box.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>

#include "grading.h"
#include "process.h"
#include "sanitized.h"
#include "skip.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using namespace grading;  // NOLINT(google-build-using-namespace): the harness of every case here

json conformance_of(const Setup& s, const Submission& sub, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> argv{grader_for(s), "--conformance", "sh replay.sh", "--submission", sub.dir.path(),
                                "--sandbox",   s.mode,          "--format",     "json",         "--traces",
                                "20"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  const Ran r = run(as(s, argv));
  INFO(r.out, r.err);
  const json report = json::parse(r.out, nullptr, false);
  REQUIRE(report.is_object());
  return report["conformance"];
}

TEST_CASE("prebuilt: a copy of cb-lab handed in as the breaker fails the conformance part, under any name") {
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      Submission sub(s, {});
      fs::create_directories(sub.dir / "bin");
      fs::copy_file(CB_LAB_BIN, sub.dir / "bin/helper");
      sub.dir.write("replay.sh", "exec ./bin/helper conform\n");
      hand_over(sub.dir.path(), s, false);
      ::chmod((sub.dir / "bin/helper").c_str(), 0755);
      const json c = conformance_of(s, sub);
      CHECK(c["status"] == "fail");
      CHECK(c["rule"] == "prebuilt");
      CHECK(c["message"] ==
            "bin/helper is a copy of this project's cb-lab or cb-grade: the conformance part grades "
            "the student's own breaker, not the harness's");
      CHECK(c["score"] == 0);
    }
  }
}

TEST_CASE("prebuilt: a rubric that refuses executables refuses any, and the default lets a student's own pass") {
  const Setup s{am_root(), "auto"};
  Submission sub(s, {});
  fs::copy_file("/bin/true", sub.dir / "mine");
  sub.dir.write("replay.sh", "exec ./mine\n");
  hand_over(sub.dir.path(), s, false);
  ::chmod((sub.dir / "mine").c_str(), 0755);
  // By default, an executable of its own is run and judged (this one answers nothing).
  const json judged = conformance_of(s, sub);
  CHECK(judged["rule"] != "prebuilt");
  TempDir rubric;
  rubric.write("rubric.json", R"({"refuse_prebuilt": "all"})");
  hand_over(rubric.path(), s, false);
  const json refused = conformance_of(s, sub, {"--rubric", rubric / "rubric.json"});
  CHECK(refused["rule"] == "prebuilt");
  CHECK(refused["message"].get<std::string>().rfind("mine is a prebuilt program", 0) == 0);
}

// Installed in a system folder the box reads (the attack as found: only copies inside the
// submission were refused), the harness still does not answer: it knows it runs in a box.
TEST_CASE("prebuilt: a cb-lab installed outside the submission, where the box can run it, does not answer") {
  if (skip_unless(am_root(), "installing a program in a system folder needs root")) return;
  char tmpl[] = "/opt/cb-harness-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::string installed = tmpl;
  struct Remove {
    std::string dir;
    ~Remove() { fs::remove_all(dir); }
  } remove{installed};
  ::chmod(installed.c_str(), 0755);
  fs::copy_file(CB_LAB_BIN, installed + "/cb-lab");
  ::chmod((installed + "/cb-lab").c_str(), 0755);
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      Submission sub(s, {});
      sub.dir.write("replay.sh", "exec " + installed + "/cb-lab conform\n");
      hand_over(sub.dir.path(), s, false);
      const json c = conformance_of(s, sub, sanitized_program_flags());  // room for a sanitized cb-lab
      INFO(c.dump());
      CHECK(c["status"] == "fail");
      CHECK(c["score"] == 0);
      CHECK(c.dump().find("refuses to run inside a grading box") != std::string::npos);
    }
  }
}

}  // namespace
}  // namespace cb::testing
