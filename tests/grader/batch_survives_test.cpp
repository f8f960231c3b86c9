// A class's batch that is stopped half-way (Ctrl-C, a cancelled job, a killed machine) loses
// nothing it finished: SIGTERM leaves the gradebook of what was graded, SIGKILL the journal of
// it, and --resume grades only what is left. Real kits, real programs, each in its own box.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "process.h"
#include "python_kit.h"
#include "temp_dir.h"

namespace cb::testing {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kGrade = CB_GRADE_BIN;
const std::string kLab = CB_LAB_BIN;

// Five students: a0-hangs first holds one worker for the whole time limit while the other
// grades the four right ones, one after another.
struct Class {
  TempDir root;
  TempDir out;
  Class() {
    for (const char* name : {"a0-hangs", "a1", "a2", "a3", "a4"}) {
      python_kit(root / name);
    }
    root.write("a0-hangs/run.sh", "exec sleep 600\n");
  }
  [[nodiscard]] std::vector<std::string> argv(const std::vector<std::string>& more = {}) const {
    std::vector<std::string> a{kGrade, "--batch", root.path(), "--run",         "sh run.sh", "--timeout",      "60s",
                               "-j",   "2",       "--reports", out / "reports", "-o",        out / "book.json"};
    a.insert(a.end(), more.begin(), more.end());
    return a;
  }
  // a0-hangs's run.sh as the kit has it.
  void fix_the_hang() const {
    REQUIRE(run({kLab, "init", root / "fixed", "--lang", "python"}).exit_code == 0);
    fs::copy_file(root / "fixed/run.sh", root / "a0-hangs/run.sh", fs::copy_options::overwrite_existing);
    fs::remove_all(root / "fixed");
  }
  [[nodiscard]] std::vector<json> journal() const {
    std::vector<json> rows;
    std::ifstream in(out / "reports/gradebook.journal");
    for (std::string line; std::getline(in, line);) rows.push_back(json::parse(line, nullptr, false));
    return rows;
  }
  // Until the journal holds `n` rows (the four quick ones), within a bound.
  [[nodiscard]] bool journal_holds(std::size_t n) const {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds{90};
    while (std::chrono::steady_clock::now() < until) {
      if (journal().size() >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds{20});
    }
    return false;
  }
  [[nodiscard]] std::map<std::string, json> book() const {
    std::map<std::string, json> rows;
    for (const json& r : json::parse(std::ifstream(out / "book.json"))) rows[r["submission"].get<std::string>()] = r;
    return rows;
  }
};

TEST_CASE("batch: stopped by SIGTERM, it writes the gradebook of what it finished, and --resume grades the rest") {
  Class c;
  Process batch(c.argv());
  REQUIRE(c.journal_holds(4));
  batch.signal(SIGTERM);
  REQUIRE(batch.wait(std::chrono::seconds{30}).value_or(-1) == 128 + SIGTERM);
  const std::string said = batch.read_all_stderr();
  INFO(said);
  CHECK(said.find("cb-grade: stopped: 5 submissions in ") != std::string::npos);
  CHECK(said.find("4 graded (4 passed), 1 not graded yet") != std::string::npos);
  auto rows = c.book();
  REQUIRE(rows.size() == 5);
  for (const char* name : {"a1", "a2", "a3", "a4"}) {
    CHECK(rows[name]["status"] == "graded");
    CHECK(rows[name]["score"] == 8);
  }
  CHECK(rows["a0-hangs"]["status"] == "not_graded");
  CHECK(rows["a0-hangs"]["max_score"] == 8);
  CHECK(rows["a0-hangs"]["error"].get<std::string>().find("--resume") != std::string::npos);
  CHECK(!fs::exists(c.out / "reports/a0-hangs/report.json"));

  // The student fixes it; the batch is taken up where it stopped.
  c.fix_the_hang();
  const Ran resumed = run(c.argv({"--resume"}), "", {}, std::chrono::seconds{120});
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.err.find("cb-grade: 5 submissions in ") != std::string::npos);  // said off a terminal too
  CHECK(resumed.err.find("5 graded (5 passed, 4 of them judged from what an earlier run kept)") != std::string::npos);
  rows = c.book();
  for (const auto& entry : rows)
    CHECK_MESSAGE(entry.second["score"] == 8, entry.first);  // clang 14: no binding in a lambda
  CHECK(!fs::exists(c.out / "reports/gradebook.journal"));   // the gradebook is whole

  // a1's run.sh now does nothing: its kept 8/8 was of other bytes, and is not reused (the finding:
  // the stamp had no digest of the folder, and a resumed batch gave the changed folder 8/8).
  const std::string kept_run = slurp(c.root / "a1/run.sh");
  c.root.write("a1/run.sh", "exit 0\n");
  const Ran changed = run(c.argv({"--resume"}), "", {}, std::chrono::seconds{120});
  INFO(changed.err);
  CHECK(changed.err.find("4 of them judged from what an earlier run kept") != std::string::npos);
  CHECK(c.book()["a1"]["score"] != 8);
  c.root.write("a1/run.sh", kept_run);

  // A batch that grades otherwise (another rubric) grades everything again.
  c.out.write("rubric.json", R"({"points": {"3": 2}})");
  const Ran other = run(c.argv({"--resume", "--rubric", c.out / "rubric.json"}), "", {}, std::chrono::seconds{120});
  INFO(other.err);
  CHECK(other.err.find("5 graded (5 passed)") != std::string::npos);
}

TEST_CASE("batch: killed with SIGKILL, its journal holds every row it finished, and --resume grades the rest") {
  Class c;
  Process batch(c.argv());
  REQUIRE(c.journal_holds(4));
  batch.signal(SIGKILL);
  REQUIRE(batch.wait(std::chrono::seconds{30}).value_or(-1) == 128 + SIGKILL);
  CHECK(!fs::exists(c.out / "book.json"));
  const std::vector<json> journal = c.journal();
  REQUIRE(journal.size() == 4);
  for (const json& row : journal) {
    CHECK(row["status"] == "graded");
    CHECK(row["score"] == 8);
  }
  // The one it was grading when it was killed left no whole grade: graded again.
  CHECK(!fs::exists(c.out / "reports/a0-hangs/report.json"));
  c.fix_the_hang();
  const Ran resumed = run(c.argv({"--resume"}), "", {}, std::chrono::seconds{120});
  INFO(resumed.err);
  CHECK(resumed.exit_code == 0);
  CHECK(resumed.err.find("5 graded (5 passed, 4 of them judged from what an earlier run kept)") != std::string::npos);
  const auto rows = c.book();
  REQUIRE(rows.size() == 5);
  for (const auto& entry : rows)
    CHECK_MESSAGE(entry.second["score"] == 8, entry.first);  // clang 14: no binding in a lambda
}

}  // namespace
}  // namespace cb::testing
