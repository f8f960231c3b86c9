// The starter kits as a student gets them from `cb-lab init`: as shipped each runs to the end
// and is graded with the grader's normal messages; with the reference rules in tests/kits/<lang>/
// (never shipped) each scores 8/8 under `cb-grade --run`. Real programs, a real server.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <ostream>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "kits.h"
#include "process.h"
#include "report_json.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;

const std::string kLab = CB_LAB_BIN;
const std::string kGrade = CB_GRADE_BIN;
// A bound on one grading, not a wait: a grading whose grader stalled (a loaded machine, an ASan
// build beside five kits) is graded again, up to 3 times, each a whole lab.
constexpr std::chrono::seconds kGrading{240};

// cb-grade --run "sh run.sh" from inside the kit's directory, as its README says.
json grade_kit(const std::string& dir) {
  const Ran r = run({"/bin/sh", "-c",
                     "cd '" + dir + "' && exec '" + kGrade + "' --run 'sh run.sh' --dir out --any-port --format json"},
                    "", {}, kGrading);
  INFO(r.out, r.err);
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  return json::parse(r.out);
}

// cb-grade --conformance "sh replay.sh" from inside the kit's directory, as its README says.
// /usr/bin goes first on PATH: a version manager's python3 shim (pyenv here) costs a third of a
// second per start, and every trace is a start.
json conformance_of_kit(const std::string& dir, int want_exit) {
  const Ran r = run({"/bin/sh", "-c",
                     "cd '" + dir + "' && PATH=/usr/bin:$PATH exec '" + kGrade +
                         "' --conformance 'sh replay.sh' --seed 12 --traces 100 --format json"},
                    "", {}, kGrading);
  INFO(r.out, r.err);
  REQUIRE(r.exit_code == want_exit);
  return json::parse(r.out)["conformance"];
}

// A kit made by cb-lab init in `dir`, its rules replaced by the reference ones.
std::string reference_kit(const TempDir& dir, const Kit& kit) {
  std::string kit_dir = dir / "kit";
  REQUIRE(run({kLab, "init", kit_dir, "--lang", kit.lang}).exit_code == 0);
  std::ofstream(kit_dir + "/" + kit.rules) << reference_rules(kit);
  return kit_dir;
}

std::map<int, std::string> verdicts(const json& report) {
  std::map<int, std::string> out;
  for (const auto& s : report["steps"]) out[s["step"].get<int>()] = s["status"].get<std::string>();
  return out;
}

TEST_CASE("cb-lab init: every kit as shipped runs to the end, graded with the grader's own messages") {
  for (const Kit& kit : all_kits()) {
    SUBCASE(kit.lang.c_str()) {
      TempDir dir;
      const std::string kit_dir = dir / "kit";
      REQUIRE(run({kLab, "init", kit_dir, "--lang", kit.lang}).exit_code == 0);
      const json report = grade_kit(kit_dir);
      INFO(report.dump(1));
      CHECK(report["program"]["exit_code"] == 0);  // it never crashes
      CHECK(report["status"] == "fail");
      // The calls are made for it (1, 2); the breaker's rules are the student's (3, 4, 7, 8); a
      // breaker that never opened had no cool-down to wait (5) and no trials to close it (6):
      // those are not judged, never passed.
      CHECK(
          verdicts(report) ==
          std::map<int, std::string>{
              {1, "pass"}, {2, "pass"}, {3, "fail"}, {4, "fail"}, {5, "skip"}, {6, "skip"}, {7, "fail"}, {8, "fail"}});
      // What stands on its having opened is skipped with the reason, not passed on nothing.
      auto checks = checks_by_id(report);
      for (const char* id : {"s4.before_at_trip", "s6.state", "s6.permitted", "s6.trials"}) {
        CAPTURE(id);
        CHECK(checks[id]["status"] == "skip");
        CHECK(checks[id]["message"].get<std::string>().rfind(
                  "not judged: every /always500 of step 4 reached the server", 0) == 0);
      }
    }
  }
}

TEST_CASE("cb-lab init: every kit with the reference rules scores 8/8 under cb-grade --run") {
  for (const Kit& kit : all_kits()) {
    SUBCASE(kit.lang.c_str()) {
      TempDir dir;
      const std::string kit_dir = reference_kit(dir, kit);
      const json report = grade_kit(kit_dir);
      INFO(report.dump(1));
      CHECK(report["score"] == 8);
      CHECK(report["passed"] == true);
      CHECK(report["checks_run"] == report["checks_total"]);
      // The same rules, driven call by call through the kit's replay entry point.
      const json c = conformance_of_kit(kit_dir, 0);
      CHECK(c["agreed"] == 100);
    }
  }
}

// The compiled kits build once per grading: build.sh builds in the lab run, and the conformance
// run, in the same box, finds the build there (C++'s two programs, Java's classes, Go's program
// and its build cache). A compiler that works only in the lab run (CB_SERVER is set there alone)
// shows it: a second build, for the conformance traces, would leave them with no answer.
struct Compiler {
  const char* lang;
  const char* variable;  // what build.sh runs, as the kit's README says
  const char* command;
};
constexpr Compiler kCompilers[] = {{"cpp", "CXX", "c++"}, {"java", "JAVAC", "javac"}, {"go", "GO", "go"}};

TEST_CASE("cb-lab init: every compiled kit is built once per grading, for the lab and for the conformance traces") {
  for (const Compiler& c : kCompilers) {
    SUBCASE(c.lang) {
      TempDir dir;
      const std::string kit_dir = reference_kit(dir, kit_of(c.lang));
      std::ofstream(kit_dir + "/build-in-the-lab-run-only.sh")
          << "[ -n \"$CB_SERVER\" ] || { echo 'a build outside the lab run' >&2; exit 1; }\nexec " << c.command
          << " \"$@\"\n";
      const Ran r = run({"/bin/sh", "-c",
                         "cd '" + kit_dir + "' && exec '" + kGrade +
                             "' --run 'sh run.sh' --conformance 'sh replay.sh' --seed 12 --traces 20 --dir out "
                             "--any-port --format json --program-env '" +
                             c.variable + "=sh build-in-the-lab-run-only.sh'"},
                        "", {}, kGrading);
      INFO(r.out, r.err);
      REQUIRE(r.exit_code == 0);
      const json report = json::parse(r.out);
      CHECK(report["score"] == report["max_score"]);
      CHECK(report["conformance"]["agreed"] == 20);
    }
  }
}

TEST_CASE("cb-lab init: every kit stops after step N with --until N, and cb-grade --step N judges it there") {
  for (const Kit& kit : all_kits()) {
    SUBCASE(kit.lang.c_str()) {
      TempDir dir;
      const std::string kit_dir = reference_kit(dir, kit);
      const Ran r = run({kGrade, "--run", "sh run.sh --until 3", "--step", "3", "--submission", kit_dir, "--dir",
                         kit_dir + "/out", "--format", "json"},
                        "", {}, kGrading);
      INFO(r.out, r.err);
      const json report = json::parse(r.out);
      CHECK(r.exit_code == 0);
      REQUIRE(report["steps"].size() == 1);
      CHECK(report["steps"][0]["step"] == 3);
      CHECK(report["steps"][0]["status"] == "pass");
      // It stopped there: no fastfail.txt, nothing of step 4 in the record.
      CHECK_FALSE(std::filesystem::exists(kit_dir + "/out/fastfail.txt"));
      CHECK(report["evidence"]["requests"] == 7);  // /count, 3 /fast, 3 /always500 (the other 2 were refused)
      const Ran bad = run({kGrade, "--run", "sh run.sh --until nine", "--submission", kit_dir, "--dir",
                           kit_dir + "/out", "--format", "json"});
      CHECK(json::parse(bad.out)["run_output"].get<std::string>().find("usage:") != std::string::npos);
    }
  }
}

// A kit made by cb-lab init in `dir`, its rules the reference ones with one mistake, built once
// there (as its README asks): each graded copy has the build, up to date, and does not build again.
std::string kit_with_mistake(const TempDir& dir, const Kit& kit, const std::string& mistake) {
  std::string kit_dir = dir / "kit";
  make_kit(kit_dir, kit, with_mistake(kit, mistake));
  return kit_dir;
}

TEST_CASE("cb-lab init: a > breaker in every kit is charged to step 3, never step 4, 20 runs on a busy machine") {
  for (const Kit& kit : all_kits()) {
    SUBCASE(kit.lang.c_str()) {
      TempDir dir;
      const std::string kit_dir = kit_with_mistake(dir, kit, "gt");
      std::vector<std::vector<std::string>> runs;
      for (int i = 0; i < 20; ++i) {
        const std::string sub = dir / ("s" + std::to_string(i));
        std::filesystem::copy(kit_dir, sub, std::filesystem::copy_options::recursive);
        // Steps 3 and 4 alone: the rest of the lab (its cool-downs) has nothing to say here.
        runs.push_back({kGrade, "--run", "sh run.sh --until 4", "--step", "3", "--step", "4", "--submission", sub,
                        "--dir", sub + "/out", "--format", "json"});
      }
      const BusyMachine busy;
      const std::vector<Ran> graded = run_all(runs, 5, kGrading);
      for (std::size_t i = 0; i < graded.size(); ++i) {
        CAPTURE(i);
        const json report = json::parse(graded[i].out);
        auto checks = checks_by_id(report);
        const std::string trip_message = checks["s3.trip"]["message"].get<std::string>();
        CAPTURE(trip_message);
        CHECK(checks["s3.trip"]["status"] == "fail");
        CHECK(trip_message.find("where the rules open") != std::string::npos);
        CHECK(checks["s4.none_reached"]["status"] == "pass");
      }
    }
  }
}

// What the grader made of one submission: the checks that failed, and the conformance rule.
struct Verdict {
  std::vector<std::string> failed;
  std::string rule;
  bool operator==(const Verdict&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Verdict& v) {
  os << "failed:";
  for (const std::string& id : v.failed) os << ' ' << id;
  return os << "; conformance: " << (v.rule.empty() ? "pass" : v.rule);
}

// Each classic mistake costs the same in every language: the same checks fail and conformance
// names the same rule, whichever kit it was written into.
TEST_CASE("cb-lab init: each classic mistake fails at the same step and with the same cause in every kit") {
  struct Case {
    const char* name;
    const char* mistake;        // as tests/kits/kits.json names it
    const char* failing_check;  // a check that must fail; empty: the lab passes, conformance does not
    const char* rule;           // the conformance rule named
  };
  const Case cases[] = {{"> for >=", "gt", "s3.trip", "trip_at_threshold"},
                        {"4xx counted", "4xx", "s7.failures", "4xx_not_counted"},
                        {"one trial", "one_trial", "s6.trials", "trials_judged_together"},
                        {"no minimum", "no_minimum", "", "minimum_calls"}};
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const std::vector<Kit>& kits = all_kits();
      std::vector<TempDir> dirs(kits.size());
      std::vector<std::vector<std::string>> runs;
      for (std::size_t k = 0; k < kits.size(); ++k) {
        const std::string kit_dir = kit_with_mistake(dirs[k], kits[k], c.mistake);
        runs.push_back({kGrade, "--run", "sh run.sh", "--conformance", "sh replay.sh", "--seed", "12", "--traces",
                        "100", "--submission", kit_dir, "--dir", kit_dir + "/out", "--format", "json"});
      }
      // The lab mostly waits out its cool-down: five at once.
      const std::vector<Ran> graded = run_all(runs, kits.size(), kGrading);
      std::vector<Verdict> verdicts;
      for (std::size_t k = 0; k < graded.size(); ++k) {
        CAPTURE(kits[k].lang);
        INFO(graded[k].err);
        REQUIRE(graded[k].exit_code == 1);
        const json report = json::parse(graded[k].out);
        Verdict v;
        for (const auto& [id, check] : checks_by_id(report))
          if (check["status"] == "fail") v.failed.push_back(id);
        v.rule = report["conformance"].value("rule", "");
        verdicts.push_back(v);
      }
      const Verdict& first = verdicts.front();
      CAPTURE(first);
      if (*c.failing_check == '\0') {
        CHECK(first.failed.empty());
      } else {
        CHECK(std::find(first.failed.begin(), first.failed.end(), c.failing_check) != first.failed.end());
      }
      CHECK(first.rule == std::string(c.rule));
      for (std::size_t k = 1; k < verdicts.size(); ++k) {
        CAPTURE(kits[k].lang);
        CHECK(verdicts[k] == first);
      }
    }
  }
}

TEST_CASE("cb-lab init: every kit as shipped answers the conformance protocol, and is told what its rules miss") {
  for (const Kit& kit : all_kits()) {
    SUBCASE(kit.lang.c_str()) {
      TempDir dir;
      const std::string kit_dir = dir / "kit";
      REQUIRE(run({kLab, "init", kit_dir, "--lang", kit.lang}).exit_code == 0);
      const json c = conformance_of_kit(kit_dir, 1);
      INFO(c.dump(1));
      // As shipped the breaker never opens: the first trace where the rules trip is where it
      // differs, named by rule, with every answer before it given (no crash, no protocol fault).
      CHECK(c["rule"] == "trip_at_threshold");
      CHECK(c["rows"].back()["got"] == "permitted CLOSED");
      CHECK(c["rows"].back()["expected"] == "permitted OPEN");
      CHECK_FALSE(c.contains("stderr_tail"));
    }
  }
}

// A kit run with no server wrote "before=None" (or null, or -1) into fastfail.txt and went on;
// the student then read a contract error about their file. It stops at once and says why.
TEST_CASE("cb-lab init: every kit with no server to call stops at step 1 and says where it looked") {
  for (const Kit& kit : all_kits()) {
    SUBCASE(kit.lang.c_str()) {
      TempDir dir;
      const std::string kit_dir = dir / "kit";
      make_kit(kit_dir, kit);
      const Ran r = run({"/bin/sh", "-c", "cd '" + kit_dir + "' && exec sh run.sh"}, "",
                        {"CB_SERVER=http://127.0.0.1:1", "CB_DIR=" + (dir / "out")});
      INFO(r.out, r.err);
      CHECK(r.exit_code == 1);
      CHECK(r.err.find("did not answer /count: start it (flaky-server), or set CB_SERVER to where it runs") !=
            std::string::npos);
      CHECK(r.err.find("127.0.0.1:1") != std::string::npos);
      CHECK_FALSE(std::filesystem::exists(dir / "out/fastfail.txt"));
      CHECK_FALSE(std::filesystem::exists(dir / "out/state.json"));
    }
  }
}

TEST_CASE("cb-lab init: a directory that is not empty is refused unless --force") {
  TempDir dir;
  dir.write("notes.txt", "mine");
  const Ran refused = run({kLab, "init", dir.path(), "--lang", "python"});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err ==
        "cb-lab init: " + dir.path() +
            " exists and is not empty; choose a new directory, or add --force to write the kit into it\n");
  CHECK_FALSE(std::filesystem::exists(dir / "lab.py"));
  const Ran forced = run({kLab, "init", dir.path(), "--lang", "python", "--force"});
  CHECK(forced.exit_code == 0);
  CHECK(std::filesystem::exists(dir / "lab.py"));
  CHECK(std::filesystem::exists(dir / "notes.txt"));  // kept
  CHECK((std::filesystem::status(dir / "run.sh").permissions() & std::filesystem::perms::owner_exec) !=
        std::filesystem::perms::none);
}

// A kit is the files in kits/<lang>/, and what init makes for the student (lab-settings.json,
// HANDOUT.md): a folder left beside them in the checkout (Python's __pycache__, from running the
// kit in place) once came out as a one-byte file of that name.
TEST_CASE("cb-lab init: a kit holds its files and nothing else") {
  for (const Kit& kit : all_kits()) {
    SUBCASE(kit.lang.c_str()) {
      TempDir dir;
      REQUIRE(run({kLab, "init", dir / "kit", "--lang", kit.lang}).exit_code == 0);
      for (const auto& entry : std::filesystem::directory_iterator(dir / "kit")) {
        CAPTURE(entry.path().string());
        CHECK(entry.is_regular_file());
        CHECK(entry.path().filename().string().rfind("__", 0) != 0);
      }
      CHECK(std::filesystem::exists(dir / "kit/HANDOUT.md"));
      CHECK(std::filesystem::exists(dir / "kit/lab-settings.json"));
    }
  }
}

TEST_CASE("cb-lab init: an unknown language lists the known ones") {
  TempDir dir;
  const Ran r = run({kLab, "init", dir / "kit", "--lang", "rust"});
  CHECK(r.exit_code == 2);
  CHECK(r.err == "cb-lab init: --lang: 'rust' is not one of cpp, go, java, node, python\n");
  CHECK_FALSE(std::filesystem::exists(dir / "kit"));
}

}  // namespace
}  // namespace cb::testing
