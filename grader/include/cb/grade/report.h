#pragma once
// What the grader found: per step, a list of named checks, each passed, failed or skipped, with
// expected and actual values and, on failure, the hint a student needs.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cb::grade {

enum class Status { Pass, Fail, Skip };
[[nodiscard]] const char* to_string(Status s) noexcept;  // "pass", "fail", "skip"

struct Check {
  std::string name;
  Status status = Status::Skip;
  std::string message;            // why it failed or was skipped, and what to do
  nlohmann::json expected;        // null when not a comparison
  nlohmann::json actual;
  bool needs_server = false;      // judged on the server's record
  bool grader_fault = false;      // the grader, not the submission, went wrong
};

struct StepReport {
  int step = 0;
  std::string title;
  Status status = Status::Skip;  // fail if any check failed; skip if every check was skipped
  double score = 0;
  double max_score = 0;
  double seconds = 0;
  std::vector<Check> checks;
};

struct Report {
  std::string dir;
  std::string server;        // where the evidence came from, or empty
  std::string evidence_note; // why there is no evidence, when there is none
  std::vector<StepReport> steps;
  double score = 0;
  double max_score = 0;
  bool passed = false;       // every selected step passed
  int checks_run = 0;        // passed or failed (not skipped)
  int checks_total = 0;
  double seconds = 0;
  std::string run_output;    // --run: the tail of the student's output
};

}  // namespace cb::grade
