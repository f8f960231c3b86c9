#pragma once
// What `cb-grade --batch --reports DIR` keeps of each submission, in DIR/NAME/:
//   report.json, report.txt, report.html   the grade, for the student to read (and for tools)
//   record.json        the server's record it was graded on (with --run), as /admin/record says it
//   files/             the lab's files as graded (what the program wrote in its box)
//   conformance.json   with --conformance: the seed, the verdict and every answer the program gave
//   grading.json       how it was graded: the numbers, the program's exit, the sandbox, the server
// and what `cb-grade --regrade DIR` reads back to grade it again without running anything.

#include <optional>
#include <string>

#include "cb/dir_handle.h"
#include "cb/grade/batch.h"
#include "cb/grade/conformance_log.h"
#include "cb/grade/record.h"
#include "cb/grade/files.h"
#include "cb/grade/grade.h"
#include "cb/grade/report.h"

namespace cb::grade {

// What grade() was given besides the files and the record, and what the report carries about
// the run that grade() does not work out (the program, the sandbox, its output).
struct GradeInputs {
  std::string student;  // with a course key: whose variant (the numbers are kept too)
  std::string numbers;  // kit_settings_json of the spec graded on
  std::optional<std::uint64_t> expected_epoch;
  bool record_private = false;
  std::size_t foreign_connections = 0;
  std::string server;
  std::string no_record_reason;
  std::string evidence_failure;
  std::optional<ProgramRun> program;
  std::optional<SandboxInfo> sandbox;
  std::string run_output;
  // --conformance: what was run, and on which traces.
  std::string conformance_command;
  int conformance_traces = 0;
  std::uint64_t conformance_seed = 0;
  // The part failed before its traces were all judged (rule "prebuilt" or "too_slow", and why):
  // kept, so a regrade, which replays answers and runs nothing, says the same.
  std::pair<std::string, std::string> conformance_refused;
};

struct KeptGrade {
  std::string dir;                       // DIR/NAME
  RowStatus status = RowStatus::Graded;  // empty or error: nothing else is kept but why
  std::string error;
  GradeInputs inputs;
  nlohmann::json report;  // report.json as kept: what a regrade compares with
  std::optional<Record> record;
  std::optional<conformance::AnswerLog> answers;
};

// Writes DIR/NAME/ for one graded submission (each file atomically): the reports of `report`,
// the record, the files of `files_from` that the lab names (the files it was graded on, read
// from the same directory as they were), grading.json and, with `answers`, conformance.json.
// `spec`: the lab it was graded on (which files to keep).
[[nodiscard]] Result<void> keep_grade(const std::string& dir, const Report& report, const GradeInputs& inputs,
                                      const std::optional<Record>& record, const SubmissionDir* files_from,
                                      const conformance::AnswerLog* answers, const LabSpec& spec);

// Writes DIR/NAME/grading.json for a submission that was not graded (empty, or an error), so
// a regrade lists it as the batch did.
[[nodiscard]] Result<void> keep_ungraded(const std::string& dir, const BatchRow& row);

// Rewrites only the three reports of DIR/NAME (a regrade's new verdict), or writes them into a
// directory already held open (cb-grade --reports).
[[nodiscard]] Result<void> write_reports(const std::string& dir, const Report& report);
[[nodiscard]] Result<void> write_reports(const DirHandle& dir, const Report& report);

// Reads DIR/NAME back. Errors name the file and the field.
[[nodiscard]] Result<KeptGrade> read_kept_grade(const std::string& dir);

}  // namespace cb::grade
