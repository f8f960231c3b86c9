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

// A class's C++ kits: the harness (lab.cpp, replay.cpp) is built once by the grader from the kit
// it carries, and each box is given a copy; a box that wrecks its copy wrecks nothing of another's.
TEST_CASE("kits in the box: a class's C++ kits build their harness once for the class, each box a copy of its own") {
  const Kit* cpp = nullptr;
  for (const Kit& kit : all_kits())
    if (kit.lang == "cpp") cpp = &kit;
  REQUIRE(cpp != nullptr);
  for (const Setup& s : setups()) {
    SUBCASE(s.name().c_str()) {
      TempDir root;
      for (const char* name : {"ann", "bob", "carl", "dave"}) {
        const std::string dir = root / name;
        REQUIRE(run({CB_LAB_BIN, "init", dir, "--lang", "cpp"}).exit_code == 0);
        std::ofstream(dir + "/" + cpp->rules) << reference_rules(*cpp);
      }
      // bob changed the harness: his own is built, never the class's.
      std::ofstream(root / "bob/lab.cpp", std::ios::app) << "// bob's\n";
      // carl's run.sh wrecks the class's objects in his box before it builds.
      std::ofstream(root / "carl/run.sh")
          << "printf junk > .cb-class/cpp/lab.o; printf junk > .cb-class/cpp/replay.o; exec sh ./replay.sh\n";
      hand_over(root.path(), s, false);
      TempDir reports;
      hand_over(reports.path(), s, true);
      const auto ran = run(as(s, {grader_for(s), "--batch", root.path(), "--run", "sh run.sh", "--conformance",
                                  "sh replay.sh", "--traces", "20", "--seed", "5", "--sandbox", s.mode, "-j", "4",
                                  "--reports", reports.path(), "-o", reports / "book.csv"}),
                           "", {}, std::chrono::seconds{240});
      INFO(ran.out, ran.err);
      const auto report = [&](const char* name) {
        std::ifstream in(reports / (std::string(name) + "/report.json"));
        return json::parse(in, nullptr, false);
      };
      const std::string shared = "as built once for the class";
      for (const char* name : {"ann", "dave"}) {
        const json r = report(name);
        INFO(name, r.dump(1).substr(0, 4000));
        CHECK(r["score"] == r["max_score"]);
        CHECK(r.value("run_output", "").find(shared) != std::string::npos);
      }
      const json bob = report("bob");
      CHECK(bob["score"] == bob["max_score"]);
      CHECK(bob.value("run_output", "").find(shared) == std::string::npos);
      // Nothing of the class's build is left in a folder handed in.
      for (const char* name : {"ann", "bob", "carl", "dave"})
        CHECK_FALSE(fs::exists(root / (std::string(name) + "/.cb-class")));
    }
  }
}
}  // namespace
}  // namespace cb::testing
