// A lab of each student's own numbers: every variant keeps every trap (checked on the project's
// engine, not on the arithmetic that chose them), a student's numbers follow from the id and the
// key alone, and a class of ten, each on a starter kit with the reference rules, is graded in one
// batch: each passes on their own numbers and is told, once, that a neighbour's are not theirs.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cb/breaker/profiles.h"
#include "cb/grade/variant.h"
#include "../kits/kits.h"
#include "harness.h"
#include "process.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using grade::LabNumbers;
using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr std::string_view kKey = "a course key for the tests, 32 b";

BreakerOptions engine_options(const LabNumbers& n, double rate) {
  BreakerOptions o = profiles::lab(std::chrono::milliseconds(n.wait_ms));
  o.trip.window.size = n.window;
  o.trip.window.minimum_calls = n.minimum_calls;
  o.trip.failure_rate_percent = rate;
  o.half_open.permitted_calls = n.trials;
  return o;
}

// Step 3 on the engine: after `fast` successes, the failure that opens it (0: none of `burst`).
int engine_trip(const BreakerOptions& o, int fast, int burst) {
  Harness h(o);
  (void)h.calls(std::string(static_cast<std::size_t>(fast), 'S'));
  for (int k = 1; k <= burst; ++k) {
    (void)h.call(Verdict::Failure);
    if (h.state() == State::Open) return k;
  }
  return 0;
}

TEST_CASE("variants: every one keeps every trap of the lab, on the engine itself") {
  const grade::LabSpec& lab = grade::lab_spec();
  const auto all = grade::variant_numbers(lab);
  REQUIRE(all.size() >= 100);  // enough that neighbours rarely share numbers
  std::set<int> trips, trials, waits, windows;
  for (const LabNumbers& n : all) {
    CAPTURE(n.text());
    const int fast = lab.script.fast;
    const int burst = lab.script.burst;
    const int at = engine_trip(engine_options(n, n.failure_rate), fast, burst);
    // > instead of >=: the engine's rule a hair stricter.
    const int strict = engine_trip(engine_options(n, n.failure_rate + 1e-9), fast, burst);
    CHECK(at >= 1);
    CHECK(at < burst);             // step 3 shows OPEN refusing
    CHECK(strict > at);            // > and >= open at different calls...
    CHECK(strict <= burst);        // ...both within step 3
    CHECK(fast + at <= n.window);  // the window holds every call at the trip
    CHECK(at == grade::trip_point(grade::with_numbers(lab, n, "x")->rules, fast, burst, false).at);
    // One trial and all of them close the breaker at different moments.
    CHECK(n.trials >= 2);
    // Long enough to tell waiting from not under load, short enough for a quick lab.
    CHECK(n.wait_ms >= 2000);
    CHECK(n.wait_ms <= 4000);
    trips.insert(at);
    trials.insert(n.trials);
    waits.insert(n.wait_ms);
    windows.insert(n.window);
  }
  // The request sequence itself differs between variants: where it opens, how many trials, how long.
  CHECK(trips.size() >= 2);
  CHECK(trials.size() == 3);
  CHECK(waits.size() == 5);
  CHECK(windows.size() == 5);
}

TEST_CASE("variants: the id and the key decide the numbers, and nothing else") {
  const grade::LabSpec& lab = grade::lab_spec();
  auto numbers = [&](std::string_view id, std::string_view key) {
    auto s = grade::variant_spec(lab, id, key);
    REQUIRE(s.ok());
    return grade::numbers_of(**s);
  };
  CHECK(numbers("alice@example.edu", kKey) == numbers("  Alice@Example.EDU\n", kKey));  // as the gradebook spells it
  // Pinned: a change of how numbers are drawn would silently give a class new numbers mid-term.
  CHECK(numbers("alice@example.edu", kKey).text() == (*grade::variant_spec(lab, "alice@example.edu", kKey))->variant);
  std::set<std::string> seen;
  int differ = 0;
  for (int i = 0; i < 40; ++i) {
    const std::string id = "student" + std::to_string(i);
    seen.insert(numbers(id, kKey).text());
    differ += numbers(id, kKey) == numbers(id, "another course key, 32 bytes ...") ? 0 : 1;
  }
  CHECK(seen.size() >= 25);  // 40 students, hundreds of variants: few share
  CHECK(differ >= 30);       // another key, other numbers

  CHECK(!grade::student_id("").ok());
  CHECK(!grade::student_id("a\x01"
                           "b")
             .ok());
  TempDir d;
  d.write("short.key", "tiny\n");
  CHECK(grade::read_course_key(d / "short.key").error().message.find("at least 16 bytes") != std::string::npos);
}

// A student whose numbers differ from the handout's where `differs` says, so the difference shows.
std::string student_whose(const std::function<bool(const LabNumbers&)>& differs) {
  for (int i = 0;; ++i) {
    std::string id = "own" + std::to_string(i);
    if (differs(grade::numbers_of(**grade::variant_spec(grade::lab_spec(), id, kKey)))) return id;
  }
}

TEST_CASE("variants: docs/HANDOUT.md is the handout filled in with the spec's own numbers") {
  std::ifstream f(std::string(CB_SOURCE_DIR) + "/docs/HANDOUT.md");
  std::stringstream s;
  s << f.rdbuf();
  CHECK(s.str().find(grade::settings_table(grade::lab_spec())) != std::string::npos);
  // scenarios/handout.md is the text; after an edit there: cb-lab init DIR --lang python, and
  // copy DIR/HANDOUT.md to docs/HANDOUT.md.
  CHECK_MESSAGE(s.str() == grade::handout_text(grade::lab_spec()),
                "docs/HANDOUT.md is not scenarios/handout.md filled in with the lab's numbers");
}

// A student with numbers of their own reads them in every step of their handout, not the
// handout's ("wait at least 3 s", "all 3 permitted trials" for a student with 3.5 s and 2).
TEST_CASE("variants: a kit made for a student holds their handout, with their numbers in every step") {
  TempDir work;
  work.write("course.key", std::string(kKey) + "\n");
  const std::string id = student_whose([](const LabNumbers& n) {
    return n.wait_ms != grade::lab_spec().rules.wait_ms && n.trials != grade::lab_spec().rules.trials;
  });
  const auto spec = *grade::variant_spec(grade::lab_spec(), id, kKey);
  const std::string kit = work / "kit";
  REQUIRE(run({CB_LAB_BIN, "init", kit, "--lang", "node", "--student", id, "--course-key", work / "course.key"})
              .exit_code == 0);
  const std::string handout = slurp(kit + "/HANDOUT.md");
  const auto& v = spec->values();
  CHECK(handout.find("Wait at least " + v.at("wait") + " after the breaker opened") != std::string::npos);
  CHECK(handout.find("all " + v.at("trials") + " permitted trials") != std::string::npos);
  CHECK(handout.find("(" + v.at("trials") + " or more)") != std::string::npos);
  CHECK(handout.find("The numbers below are student " + id + "'s numbers") != std::string::npos);
  CHECK(handout.find("Wait at least 3 s") == std::string::npos);
  // cb-lab variant writes the same handout for an instructor to hand out.
  REQUIRE(run({CB_LAB_BIN, "variant", id, "--course-key", work / "course.key", "--handout", work / "h.md"}).exit_code ==
          0);
  CHECK(slurp(work / "h.md") == handout);
}

TEST_CASE("variants: a student checks their own kit on its lab-settings.json, without the course key") {
  TempDir work;
  work.write("course.key", std::string(kKey) + "\n");
  // A student whose numbers are not the handout's window and trials, so the difference shows.
  const std::string id = student_whose([](const LabNumbers& n) {
    return n.window != grade::lab_spec().rules.window && n.trials != grade::lab_spec().rules.trials;
  });
  const std::string kit = work / "kit";
  REQUIRE(run({CB_LAB_BIN, "init", kit, "--lang", "python", "--student", id, "--course-key", work / "course.key"})
              .exit_code == 0);
  std::filesystem::copy_file(std::string(CB_KIT_REFERENCE) + "/python/breaker.py", kit + "/breaker.py",
                             std::filesystem::copy_options::overwrite_existing);
  auto grade_kit = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv{CB_GRADE_BIN, "--run",      "sh run.sh",  "--submission", kit,
                                  "--dir",      work / "out", "--any-port", "--format",     "json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const Ran r = run(argv, {}, {}, 120s);
    INFO(r.err);
    return json::parse(r.out);
  };
  // Without a flag: the folder's own lab-settings.json, and the report says so first.
  const json found = grade_kit({});
  CHECK(found["score"] == 8);
  const std::string found_numbers = found["numbers"];
  CHECK(found_numbers.rfind("the numbers of lab-settings.json (window ", 0) == 0);
  CHECK(found_numbers.find("), from lab-settings.json in the folder graded") != std::string::npos);
  const json own = grade_kit({"--settings", kit + "/lab-settings.json"});
  CHECK(own["score"] == 8);
  CHECK(own["numbers"].get<std::string>().rfind("the numbers of lab-settings.json (window ", 0) == 0);
  // An instructor without a key: the handout's, whatever the folder holds, and the report says so.
  const json handout = grade_kit({"--handout-numbers"});
  CHECK(handout["passed"] == false);
  CHECK(handout["steps"][0]["status"] == "fail");
  CHECK(handout["notes"][0].get<std::string>().find("--handout-numbers grades on the handout's") != std::string::npos);
  const json keyed = grade_kit({"--student", id, "--course-key", work / "course.key"});
  CHECK(keyed["score"] == 8);
  CHECK(keyed["numbers"].get<std::string>().find(", from the course key") != std::string::npos);
  SUBCASE("with the course key, a settings file claiming other numbers is never trusted, and the report says so") {
    // The student writes the handout's numbers into the kit: its program runs on them, and the
    // grade is still on the student's own (s1.numbers fails), with a note naming the file.
    std::ofstream(kit + "/lab-settings.json", std::ios::trunc) << grade::kit_settings_json(grade::lab_spec());
    const json tampered = grade_kit({"--student", id, "--course-key", work / "course.key"});
    CHECK(tampered["passed"] == false);
    CHECK(tampered["numbers"].get<std::string>().rfind("student " + id + "'s numbers", 0) == 0);
    CHECK(tampered["notes"][0].get<std::string>().find("lab-settings.json holds other numbers") != std::string::npos);
    CHECK(tampered["notes"][0].get<std::string>().find("never uses them") != std::string::npos);
  }
}

// The handout's "Getting started" block, run as written (its PATH line aside: the programs are
// the build's), by a student whose kit was made for them: their own numbers, 8/8, said first on
// the terminal and on the page. Before, the same commands scored 4/8 with three steps "not
// judged": grading without --settings used the handout's numbers.
TEST_CASE("variants: a student with their own numbers who follows the handout as written gets 8/8 on them") {
  TempDir work;
  work.write("course.key", std::string(kKey) + "\n");
  const std::string id = student_whose([](const LabNumbers& n) {
    return n.wait_ms != grade::lab_spec().rules.wait_ms && n.trials != grade::lab_spec().rules.trials;
  });
  const std::string handout = slurp(std::string(CB_SOURCE_DIR) + "/docs/HANDOUT.md");
  const auto start = handout.find("```sh\n", handout.find("## Getting started"));
  REQUIRE(start != std::string::npos);
  const auto end = handout.find("```", start + 6);
  std::istringstream block(handout.substr(start + 6, end - start - 6));
  std::string script = "set -e\n";
  std::vector<std::string> commands;
  for (std::string line; std::getline(block, line);) {
    line = line.substr(0, line.find("  #"));
    if (line.rfind("export PATH=", 0) == 0) continue;
    commands.push_back(line);
    script += line;
    if (line.rfind("cb-lab init ", 0) == 0) {
      // The kit made for this student, and their rules written in (the reference ones).
      script += " --student " + id + " --course-key '" + (work / "course.key") + "'\n";
      script += "cp '" + std::string(CB_KIT_REFERENCE) + "/python/breaker.py' mylab/breaker.py";
    }
    script += "\n";
  }
  REQUIRE(commands.size() == 3);
  CHECK(commands[0].rfind("cb-lab init mylab --lang python", 0) == 0);
  CHECK(commands.back() == "cb-grade --run \"sh run.sh\" --dir out");
  const std::string bin = std::filesystem::path(CB_LAB_BIN).parent_path().string() + ":" +
                          std::filesystem::path(CB_GRADE_BIN).parent_path().string();
  const Ran r =
      run({"/bin/sh", "-c", "cd '" + work.path() + "' && PATH='" + bin + "':/usr/bin:/bin\n" + script}, {}, {}, 120s);
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  const std::string own = "graded on the numbers of lab-settings.json (" +
                          grade::numbers_of(**grade::variant_spec(grade::lab_spec(), id, kKey)).text();
  CHECK(r.out.find(own) != std::string::npos);
  CHECK(r.out.find("Score 8/8: every step checked passed") != std::string::npos);
  // The page the handout names, on the same numbers.
  const Ran page = run({"/bin/sh", "-c",
                        "cd '" + (work / "mylab") + "' && PATH='" + bin +
                            "':/usr/bin:/bin exec cb-grade --run 'sh run.sh' --dir out --format html -o report.html"},
                       {}, {}, 120s);
  CHECK(page.exit_code == 0);
  CHECK(slurp(work / "mylab/report.html").find("Graded on the numbers of lab-settings.json (") != std::string::npos);
}

// ---- A class of ten ------------------------------------------------------------------------

json batch(const TempDir& key_dir, const std::string& root, const std::string& roster,
           const std::vector<std::string>& more = {}) {
  std::vector<std::string> argv{CB_GRADE_BIN,           "--batch",  root,   "--run", "sh run.sh", "--course-key",
                                key_dir / "course.key", "--format", "json", "-j",    "5"};
  argv.insert(argv.end(), more.begin(), more.end());
  if (!roster.empty()) {
    argv.emplace_back("--roster");
    argv.push_back(roster);
  }
  const Ran r = run(argv, {}, {}, 300s);
  INFO(r.err);
  REQUIRE((r.exit_code == 0 || r.exit_code == 1));
  return json::parse(r.out);
}

TEST_CASE("variants: a class of ten in one batch - each passes on their own numbers, fails on a neighbour's") {
  TempDir work;
  work.write("course.key", std::string(kKey) + "\n");
  const grade::LabSpec& lab = grade::lab_spec();
  // Ten students, each with a neighbour whose numbers show otherwise in the run (another window
  // or trial count): ids are picked so, since two variants may share what a run can show.
  std::vector<std::string> ids;
  auto shown = [&](const std::string& id) {
    const LabNumbers n = grade::numbers_of(**grade::variant_spec(lab, id, kKey));
    return std::pair{n.window, n.trials};
  };
  for (int i = 0; ids.size() < 10; ++i) {
    const std::string id = "s" + std::to_string(i) + "@class.example";
    if (ids.empty() || shown(ids.back()) != shown(id)) ids.push_back(id);
  }
  REQUIRE(shown(ids.back()) != shown(ids.front()));

  const std::string root = work / "class";
  std::string roster = "folder,student\n";
  std::string shifted = "folder,student\n";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const Kit& kit = all_kits()[i % all_kits().size()];
    const std::string folder = "sub" + std::to_string(i);
    const std::string dir = root + "/" + folder;
    const Ran init =
        run({CB_LAB_BIN, "init", dir, "--lang", kit.lang, "--student", ids[i], "--course-key", work / "course.key"});
    REQUIRE(init.exit_code == 0);
    std::ofstream(dir + "/" + kit.rules) << reference_rules(kit);
    roster += folder + "," + ids[i] + "\n";
    shifted += folder + "," + ids[(i + 1) % ids.size()] + "\n";
  }
  work.write("roster.csv", roster);
  work.write("shifted.csv", shifted);

  const json own = batch(work, root, work / "roster.csv");
  REQUIRE(own.size() == 10);
  for (std::size_t i = 0; i < own.size(); ++i) {
    CAPTURE(own[i].dump());
    CHECK(own[i]["student"] == ids[i]);
    CHECK(own[i]["score"] == 8);
    CHECK(own[i]["numbers"].get<std::string>().find(ids[i]) != std::string::npos);
  }

  // The same programs, each graded as its neighbour: the numbers are not theirs, said once, with
  // whose they are; a rubric that caps such a run's steps at 0 gives it nothing for them.
  work.write("rubric.json", R"({"cap_other_numbers": 0})");
  const json swapped = batch(work, root, work / "shifted.csv", {"--rubric", work / "rubric.json"});
  REQUIRE(swapped.size() == 10);
  for (std::size_t i = 0; i < swapped.size(); ++i) {
    CAPTURE(swapped[i].dump());
    CHECK(swapped[i]["passed"] == false);
    CHECK(swapped[i]["score"] == 0);
    CHECK(swapped[i]["steps"]["1"]["status"] == "fail");
    CHECK(swapped[i]["steps"]["1"]["check"] == "s1.numbers");
    CHECK(swapped[i]["steps"]["1"]["message"].get<std::string>().find("by the course key, the numbers of") !=
          std::string::npos);
    CHECK(swapped[i]["steps"]["1"]["message"].get<std::string>().find(ids[i]) != std::string::npos);
    CHECK(swapped[i]["failed"] == json::array({"s1.numbers"}));
    for (int step = 2; step <= 8; ++step) CHECK(swapped[i]["steps"][std::to_string(step)] != "fail");
  }
}

}  // namespace
}  // namespace cb::testing

namespace cb::testing {
namespace {

namespace fs = std::filesystem;
TEST_CASE(
    "variants: one id field everywhere - cb-lab variant --roster makes each kit, the batch grades on that field") {
  TempDir work;
  work.write("course.key", std::string(kKey) + "\n");
  // A roster as a course exports it: the folder, the student id and the email.
  work.write("roster.csv", "folder,sid,email\nann,s01,ann@class.example\nben,s02,ben@class.example\n");
  const Ran made = run({CB_LAB_BIN, "variant", "--roster", work / "roster.csv", "--course-key", work / "course.key",
                        "--out", work / "handed-out"});
  INFO(made.out, made.err);
  REQUIRE(made.exit_code == 0);
  CHECK(made.out.find("2 students (by email)") != std::string::npos);
  for (const char* folder : {"ann", "ben"}) {
    const std::string dir = work / ("class/" + std::string(folder));
    REQUIRE(run({CB_LAB_BIN, "init", dir, "--lang", "python"}).exit_code == 0);
    fs::copy_file(work / ("handed-out/" + std::string(folder) + "/lab-settings.json"), dir + "/lab-settings.json",
                  fs::copy_options::overwrite_existing);
    CHECK(fs::is_regular_file(work / ("handed-out/" + std::string(folder) + "/HANDOUT.md")));
    std::ofstream(dir + "/breaker.py") << reference_rules(kit_of("python"));
  }
  const auto graded = [&](const std::vector<std::string>& more) {
    std::vector<std::string> argv{
        CB_GRADE_BIN,        "--batch",  work / "class",      "--run",    "sh run.sh", "--course-key",
        work / "course.key", "--roster", work / "roster.csv", "--format", "json"};
    argv.insert(argv.end(), more.begin(), more.end());
    const Ran r = run(argv, {}, {}, 300s);
    INFO(r.err);
    return json::parse(r.out);
  };
  // The field by default (email), as the kits were made: full marks, and the report says which.
  const json by_email = graded({});
  for (const json& row : by_email) {
    CAPTURE(row.dump());
    CHECK(row["score"] == 8);
    CHECK(row["student"].get<std::string>().find("@class.example") != std::string::npos);
  }
  REQUIRE(run({CB_GRADE_BIN, "--batch", work / "class", "--run", "sh run.sh", "--course-key", work / "course.key",
               "--roster", work / "roster.csv", "--reports", work / "reports"},
              {}, {}, 300s)
              .exit_code == 0);
  CHECK(slurp(work / "reports/ann/report.txt").find("from the course key and the student's email") !=
        std::string::npos);
  // Another field, another student's numbers: the run is told apart (s1.numbers).
  const json by_sid = graded({"--id-field", "sid"});
  for (const json& row : by_sid) {
    CHECK(row["steps"]["1"]["check"] == "s1.numbers");
    CHECK(row["student"].get<std::string>().rfind("s0", 0) == 0);
  }
  // A field the roster has no column for is named.
  const Ran missing = run({CB_GRADE_BIN, "--batch", work / "class", "--run", "sh run.sh", "--course-key",
                           work / "course.key", "--roster", work / "roster.csv", "--id-field", "login"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("roster.csv: line 1: no column login (the id field") != std::string::npos);
}

}  // namespace
}  // namespace cb::testing

namespace cb::testing {
namespace {

// HANDOUT.md told a student to run `cb-lab init DIR --student ID`, which cannot work: the course
// key it needs is the instructor's. Every `cb-lab init` the handout shows runs as written, its
// placeholders filled in, and a student who tries --student alone is told whose key it is.
TEST_CASE("variant: every cb-lab init the handout shows runs as written") {
  std::ifstream in(std::string(CB_SOURCE_DIR) + "/docs/HANDOUT.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string handout = text.str();
  TempDir dir;
  std::ofstream(dir / "course.key") << "0123456789abcdef0123456789abcdef0123456789ab\n";
  const std::map<std::string, std::string> fill{{"LANG", "python"}, {"ID", "ada@uni.edu"}, {"KEY", dir / "course.key"}};
  int shown = 0;
  for (std::size_t at = handout.find("`cb-lab init "); at != std::string::npos;
       at = handout.find("`cb-lab init ", at + 1)) {
    const std::string command = handout.substr(at + 1, handout.find('`', at + 1) - at - 1);
    std::vector<std::string> argv{CB_LAB_BIN};
    std::istringstream words(command.substr(std::string("cb-lab ").size()));
    for (std::string w; words >> w;) {
      if (w == "DIR" || w == "mylab") w = dir / ("kit" + std::to_string(shown));
      if (const auto f = fill.find(w); f != fill.end()) w = f->second;
      argv.push_back(w);
    }
    CAPTURE(command);
    const Ran r = run(argv);
    INFO(r.err);
    CHECK(r.exit_code == 0);
    ++shown;
  }
  CHECK(shown >= 2);
  const Ran alone = run({CB_LAB_BIN, "init", dir / "mine", "--lang", "python", "--student", "ada@uni.edu"});
  CHECK(alone.exit_code == 2);
  CHECK(alone.err.find("which your instructor holds") != std::string::npos);
}

}  // namespace
}  // namespace cb::testing
