#pragma once
// cb-grade's flags: declared for CLI11 in one place, then checked and read once (every file they
// name: the lab, the numbers, the rubric, the course key) into what the grading needs.

#include <CLI/CLI.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "cb/grade/format.h"
#include "cb/grade/gather.h"
#include "cb/grade/grade.h"
#include "cb/result.h"
#include "cli_options.h"
#include "sandbox_flags.h"

namespace cb::grade {

// `max_score`, `list`: --max-score and --list-checks, which print and exit.
void add_grade_flags(CLI::App& app, Options& o, SandboxFlags& sandbox, bool& max_score, bool& list);

// A subcommand that takes some of cb-grade's own flags (CLI11's fallthrough) names them in its
// --help, in cb-grade's own words: CLI11 lists a subcommand's own options only.
void list_flags_taken(CLI::App* sub, const CLI::App& app, std::vector<std::string> flags);

// The flags every command that grades a class takes: how each program is run and judged.
[[nodiscard]] std::vector<std::string> class_grading_flags();
// The flags of a command that joins kept grades into a class (merge, queue collect).
[[nodiscard]] std::vector<std::string> class_joining_flags();

// What the flags ask, read once.
struct Asked {
  Format format = Format::Text;
  GradeOptions grade;      // the steps, the rubric (with --refuse-prebuilt), the lab and its numbers
  std::string course_key;  // the key itself, read from --course-key's file
  std::chrono::milliseconds timeout{0};
  bool conformance_only = false;              // --conformance, with nothing that points at the lab's files
  std::optional<ConformanceRun> conformance;  // with --conformance: its traces, seed and limits
  std::string numbers_note;                   // the folder's lab-settings.json holds numbers not graded on, and why
  std::string id_field = "email";             // which field names a student (--id-field, else the rubric's)
};

// Errors are one line naming the flag (or its file) and what was expected.
[[nodiscard]] Result<Asked> read_flags(const CLI::App& app, Options& o);

}  // namespace cb::grade
