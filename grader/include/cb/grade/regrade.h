#pragma once
// Grading from what was kept: the part of a batch that comes after the program ran, shared by
// `--batch` (right after the run) and `--regrade DIR` (from class_reports.h's folders, with
// nothing run at all: a new rubric or a new grader over the same evidence).

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cb/grade/batch.h"
#include "cb/grade/class_reports.h"

namespace cb::grade {

// grade() on `files` and `record` with `inputs` applied, and the report given what the run
// told (the program, the sandbox, its output).
[[nodiscard]] Report grade_kept(const SubmissionDir& files, const std::optional<Record>& record,
                                const GradeInputs& inputs, GradeOptions options);

// The conformance part on `inputs`' command, traces and seed, worth the rubric's points; failed
// as `inputs.conformance_refused` says, without a trace, when it says so. `time_limit`: all the
// traces' (zero: none; a regrade replays, and takes none).
[[nodiscard]] ConformancePart conformance_part(const GradeInputs& inputs, const Rubric& rubric,
                                               const conformance::Programs& programs,
                                               std::chrono::milliseconds time_limit = {});

struct RegradeOptions {
  std::string dir;     // what --batch --reports kept
  GradeOptions grade;  // the rubric and the lab to grade on now (a variant keeps its numbers)
  int jobs = 0;        // 0: one per core
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// Every folder of `dir` graded again; each row says what changed. Reports are rewritten.
// Errors: `dir` cannot be listed.
[[nodiscard]] Result<std::vector<BatchRow>> regrade(const RegradeOptions& options);

// What differs between a kept report.json and a new grade, for a person: "" when nothing does.
[[nodiscard]] std::string changes(const nlohmann::json& before, const Report& after);

}  // namespace cb::grade
