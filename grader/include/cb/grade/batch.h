#pragma once
// A class's submissions at once: every subdirectory of a root is a submission, graded in
// parallel, into one gradebook. With --run, each runs in a box of its own (a copy of it, a uid
// of its own), so no submission can see or touch another, and every folder is left as it was.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cb/grade/grade.h"
#include "cb/grade/run_student.h"

namespace cb::grade {

struct BatchOptions {
  std::string root;
  std::string files_dir = ".";             // inside each submission, where the lab's files are
  std::optional<std::string> run_command;  // --run, in each submission's box, on a server of its own
  sandbox::Sandbox* sandbox = nullptr;     // with run_command: every program runs in a box of it
  std::chrono::milliseconds timeout = std::chrono::seconds{60};
  GradeOptions grade;
  int jobs = 0;  // 0: one per core
  // Each student graded on their own numbers (variant.h): the course key, and the students'
  // ids by submission folder (a folder not named here is its own id). Empty key: the same
  // numbers for all (grade.spec's, or the handout's).
  std::string course_key;
  std::map<std::string, std::string> roster;
  bool roster_only = false;  // a folder the roster does not name is an error, not an id
};

struct BatchRow {
  std::string submission;  // the subdirectory's name
  std::string student;     // with a course key: whose numbers it was graded on
  std::optional<Report> report;
  std::string error;  // when it could not be graded at all
};

// Errors: the root cannot be listed.
[[nodiscard]] Result<std::vector<BatchRow>> grade_batch(const BatchOptions& options);

// A roster: "folder,student" a line (a first line "folder,student" is a header). Errors name
// the line.
[[nodiscard]] Result<std::map<std::string, std::string>> parse_roster(std::string_view csv, const std::string& name);

[[nodiscard]] std::string gradebook_csv(const std::vector<BatchRow>& rows);
[[nodiscard]] std::string gradebook_json(const std::vector<BatchRow>& rows);

}  // namespace cb::grade
