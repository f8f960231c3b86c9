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
#include "cb/grade/evidence.h"
#include "cb/grade/files.h"
#include "cb/grade/lab_spec.h"
#include "cb/grade/report.h"
#include "cb/grade/rubric.h"

namespace cb::grade {

// What the grader asks of the evidence: which steps, on which lab and numbers, for which points.
// What happened is the Evidence's (evidence.h).
struct GradeOptions {
  // Empty: grade all eight steps as a finished run. Otherwise: what must hold right after each
  // of these steps (a student checking as they go).
  std::set<int> steps;
  Rubric rubric = Rubric::equal();
  // The lab graded against: its numbers, titles and files (null: the one built in, lab_spec()).
  std::shared_ptr<const LabSpec> spec;
};

// The lab's steps, judged on `evidence`'s files and record (the conformance part is judge()'s:
// judge.h). Evidence without files is graded as a folder that is not there.
[[nodiscard]] Report grade_steps(const Evidence& evidence, const GradeOptions& options);

// The catalogue of checks, step by step, with their titles on `spec`'s numbers (cb-grade
// --list-checks): a Markdown table (docs/GRADER.md holds it), or with `json`, a JSON array of
// {step, id, when, needs, title}.
[[nodiscard]] std::string list_checks(const LabSpec& spec, bool json);

// Whether a check of `step` right after it (--step N) reads a lab file (step 1's stand on the
// server alone).
[[nodiscard]] bool reads_files(int step);

// 0: every selected step passed; 1: a step failed; 2: the grader could not judge (bad usage, or
// evidence that failed: Report::status is Status::Error).
[[nodiscard]] int exit_code(const Report& report) noexcept;

}  // namespace cb::grade
