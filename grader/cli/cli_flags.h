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

// The flags, in groups: each mode (modes.cpp) declares those it takes, so its --help lists exactly
// them and any other is refused by name (cb::usage_error says which mode takes it).

// The grading flags, one group every mode that grades takes (one submission, a class, queue push
// and work): how each program is run and judged, the numbers, the rubric, -j, what is kept and
// written. `a_class`: its output is a gradebook, and a roster may name the students.
void add_grading_flags(CLI::App& app, GradingFlags& o, SandboxFlags& sandbox, bool a_class);
// Its parts, for the modes that take only some (a regrade, a merge, verify, queue collect).
void add_program_flags(CLI::App& app, GradingFlags& o, SandboxFlags& sandbox);
void add_spec_flag(CLI::App& app, JudgingFlags& o);
void add_key_flags(CLI::App& app, GradingFlags& o, bool a_class);  // --course-key, --id-field (a class: --roster)
void add_rubric_flag(CLI::App& app, JudgingFlags& o);
void add_jobs_flag(CLI::App& app, JudgingFlags& o, const std::string& what);
// What the modes that judge kept grades again take (regrade, merge, verify, queue collect): the
// --rubric, and -j (one per CPU: they only compute).
void add_judging_flags(CLI::App& app, JudgingFlags& o);
void add_report_flags(CLI::App& app, OutputFlags& o);     // --format (a report's), -o
void add_gradebook_flags(CLI::App& app, OutputFlags& o);  // --format (csv or json), -o
// One submission's own: its folder, its server or record, whose numbers; --max-score and
// --list-checks, which print and exit.
void add_one_submission_flags(CLI::App& app, OneArgs& o);
// A class's own: where each folder's files are; `in_shards` (cb-grade class, not the queue):
// resuming, and a shard of it.
void add_class_flags(CLI::App& app, ClassArgs& o, bool in_shards);

// Whether `flag` is one of `app`'s and was given.
[[nodiscard]] bool given(const CLI::App& app, const char* flag);

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

// `app`: the mode's own (its flags). Errors are one line naming the flag (or its file) and what
// was expected. One submission, and a class (cb-grade class, queue push and work: each folder's
// numbers are its own).
[[nodiscard]] Result<Asked> read_flags(const CLI::App& app, const OneArgs& o);
[[nodiscard]] Result<Asked> read_flags(const CLI::App& app, const ClassArgs& o);
// What the modes that only judge (regrade, merge, verify, queue collect) ask: the rubric and the lab.
[[nodiscard]] Result<GradeOptions> read_judging(const JudgingFlags& o);

}  // namespace cb::grade
