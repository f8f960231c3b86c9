// Where --batch finds each submission's program, by the rule Gradescope's run_autograder uses
// (a folder handed in as a zip of a folder is graded from inside it), and what its report keeps
// of a program that hangs: what it printed, under the student's name.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "dated.h"
#include "process.h"
#include "python_kit.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kGrade = CB_GRADE_BIN;

TEST_CASE("batch: a submission zipped as one folder is graded from inside it, as run_autograder finds it") {
  TempDir root;
  python_kit(root / "flat");
  python_kit(root / "nested/my-lab");
  fs::create_directories(root / "nested/__MACOSX/my-lab");  // what macOS's zip adds beside it
  python_kit(root / "two/a");                               // two folders: which one is not ours to guess
  python_kit(root / "two/b");
  fs::create_directories(root / "linked");
  fs::create_symlink(root / "flat", root / "linked/my-lab");  // a link is never followed
  const Ran r = run({kGrade, "--batch", root.path(), "--run", "sh run.sh", "--format", "json", "-j", "2"}, "", {},
                    std::chrono::seconds{120});
  INFO(r.out, r.err);
  std::map<std::string, json> rows;
  for (const json& row : json::parse(r.out)) rows[row["submission"].get<std::string>()] = row;
  CHECK(rows.at("flat")["score"] == 8);
  CHECK(rows.at("nested")["score"] == 8);
  CHECK(rows.at("two")["score"] == 0);
  CHECK(rows.at("linked")["score"] == 0);
}

// Everyone passed: a folder superseded by its student's later hand-in does not make the class's
// exit say a student failed.
TEST_CASE("batch: a class whose every student passed exits 0, though one of them handed in twice") {
  TempDir root;
  python_kit(root / "zz-early");
  python_kit(root / "Zz-Early");  // the same student by the id rule
  REQUIRE(date_all(root / "zz-early", 1'793'664'000));
  REQUIRE(date_all(root / "Zz-Early", 1'793'664'000));
  const Ran r = run({kGrade, "--batch", root.path(), "--run", "sh run.sh", "--format", "json", "-j", "2"}, "", {},
                    std::chrono::seconds{120});
  INFO(r.out, r.err);
  CHECK(r.exit_code == 0);
  std::map<std::string, json> rows;
  for (const json& row : json::parse(r.out)) rows[row["submission"].get<std::string>()] = row;
  REQUIRE(rows.size() == 2);
  CHECK(rows.at("zz-early")["score"] == 8);  // equal times: the later name in byte order wins
  CHECK(rows.at("Zz-Early")["status"] == "superseded");
}

TEST_CASE("batch: a Python program killed at the time limit leaves what it printed, and its page is named for it") {
  TempDir root;
  python_kit(root / "stuck");
  root.write("stuck/run.sh", "exec python3 -c \"print('reached step 4'); import time; time.sleep(600)\"\n");
  TempDir out;
  const Ran r = run({kGrade, "--batch", root.path(), "--run", "sh run.sh", "--timeout", "3s", "--reports",
                     out / "reports", "--format", "json"},
                    "", {}, std::chrono::seconds{60});
  INFO(r.err);
  // Python writes to a pipe in blocks: without PYTHONUNBUFFERED the line died with the process.
  CHECK(slurp(out / "reports/stuck/report.txt").find("reached step 4") != std::string::npos);
  const std::string page = slurp(out / "reports/stuck/report.html");
  CHECK(page.find("<title>stuck: 0/8 - the circuit-breaker lab</title>") != std::string::npos);
}

}  // namespace
}  // namespace cb::testing
