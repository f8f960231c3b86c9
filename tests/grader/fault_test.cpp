// Whose fault a failure is: the grader's own (it stalled, no box could be made) is never a grade.
// A grader stopped while its programs run leaves them calling a server that does not answer, and
// timing nothing: such a run is graded again, and the report says why.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
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

// Whether a lab run of a Python kit is under way (its lab.py running), within a bound.
bool lab_run_started(std::chrono::seconds bound) {
  const auto until = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < until) {
    for (const auto& [pid, cmd] : process_command_lines())
      if (cmd.find("python3") != std::string::npos && cmd.find("lab.py") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
  return false;
}

TEST_CASE("whose fault: a grader stopped in the middle of a batch grades its right programs again, to full marks") {
  TempDir dir;
  const std::string root = dir / "cls";
  python_kit(root + "/ann");
  python_kit(root + "/bob");
  Process grader({CB_GRADE_BIN, "--batch", root, "--run", "sh run.sh", "--timeout", "60s", "-j", "2", "--reports",
                  dir / "reports", "-o", dir / "book.json"});
  REQUIRE(lab_run_started(std::chrono::seconds{60}));
  // Stopped from a second into the run for ten: over the cool-down's end, so the trials and the
  // 4xx calls go unanswered past their 2 s timeout (before the stall was seen, both right kits got
  // 6 of 8 so: "HALF_OPEN->OPEN").
  std::this_thread::sleep_for(std::chrono::seconds{1});
  grader.signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::seconds{10});
  grader.signal(SIGCONT);
  const auto rc = grader.wait(std::chrono::seconds{240});
  const std::string err = grader.read_all_stderr();
  INFO(err);
  REQUIRE(rc.value_or(-1) == 0);
  std::map<std::string, json> rows;
  for (const json& r : json::parse(std::ifstream(dir / "book.json"))) rows[r["submission"].get<std::string>()] = r;
  REQUIRE(rows.size() == 2);
  int graded_again = 0;
  for (const auto& entry : rows) {
    const std::string& name = entry.first;  // not a structured binding: INFO captures it
    const json& row = entry.second;
    INFO(name, row.dump());
    CHECK(row["status"] == "graded");
    CHECK(row["score"] == row["max_score"]);
    const json report = json::parse(std::ifstream(dir / ("reports/" + name + "/report.json")));
    for (const json& note : report["notes"])
      if (note.get<std::string>().find("Graded again: an earlier try failed through the grader's fault") == 0 &&
          note.get<std::string>().find("the grader stalled for ") != std::string::npos)
        ++graded_again;
  }
  CHECK(graded_again >= 1);  // the one that was running, at least
}

}  // namespace
}  // namespace cb::testing
