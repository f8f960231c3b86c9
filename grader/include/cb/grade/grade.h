#pragma once
// Grading one submission directory: the lab's checks, step by step, on its files and, when
// there is one, the server's record.

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cb/grade/record.h"
#include "cb/grade/files.h"
#include "cb/grade/lab_spec.h"
#include "cb/grade/report.h"
#include "cb/grade/rubric.h"

namespace cb::grade {

// What the caller saw of the server before grading (cb-lab probes it before step 1).
struct ServerProbe {
  bool flaky = true;   // it answered as a flaky server
  std::string detail;  // what it answered instead, when not
};

struct GradeOptions {
  // Empty: grade all eight steps as a finished run. Otherwise: what must hold right after each
  // of these steps (a student checking as they go).
  std::set<int> steps;
  Rubric rubric = Rubric::equal();
  // The record's epoch when the run began (cb-lab resets the server and knows it; --run's fresh
  // server starts at 1). A record of another epoch was reset mid-run: the evidence failed.
  std::optional<std::uint64_t> expected_epoch;
  // Set by a caller that saw the evidence fail during the run (the server stopped answering):
  // nothing that failed can be charged to the submission.
  std::string evidence_failure;
  // A live server found at its default address may hold another run's record: compare when the
  // files were written with when the record's requests came.
  bool check_file_times = false;
  // --run, when no other program could reach the server (docs/GRADER.md, the sandbox): what the
  // record holds is the program's doing, so two runs in it, or more requests than it keeps, are
  // a mistake charged to step 1 (s1.once), not evidence that failed.
  bool record_private = false;
  std::size_t foreign_connections = 0;  // connections from other programs, refused (the report says so)
  std::optional<ServerProbe> probe;
  // Where the record came from ("http://127.0.0.1:8110", "saved record FILE"), for the report.
  std::string server;
  // The lab graded against: its numbers, titles and files (null: the one built in, lab_spec()).
  std::shared_ptr<const LabSpec> spec;
  // From the program that ran the lab (cb-lab run), when it says: the last record entry (seq) of
  // each step 1..N. The report's timeline places requests by it instead of by the record's shape.
  std::vector<std::uint64_t> step_last_seq;
};

// `record`: the server's record, or nullopt with `no_record_reason` saying why.
[[nodiscard]] Report grade(const SubmissionDir& dir, const std::optional<Record>& record,
                           const std::string& no_record_reason, const GradeOptions& options);

// The ids of the checks the grader has code for (each registered beside its body). With the
// catalogue's file contracts, judged by one rule for all, they are the spec's checks, exactly.
[[nodiscard]] std::vector<std::string_view> checks_with_code();

// 0: every selected step passed; 1: a step failed; 2: the grader could not judge (bad usage, or
// evidence that failed: Report::status is Status::Error).
[[nodiscard]] int exit_code(const Report& report) noexcept;

}  // namespace cb::grade
