#pragma once
// Grading one submission directory: the lab's checks, step by step, on its files and, when
// there is one, the server's record.

#include <optional>
#include <set>
#include <string>

#include "cb/grade/evidence.h"
#include "cb/grade/files.h"
#include "cb/grade/report.h"
#include "cb/grade/rubric.h"

namespace cb::grade {

struct GradeOptions {
  // Empty: grade all eight steps as a finished run. Otherwise: what must hold right after each
  // of these steps (a student checking as they go).
  std::set<int> steps;
  Rubric rubric = Rubric::equal();
};

// `record`: the server's record, or nullopt with `no_record_reason` saying why.
[[nodiscard]] Report grade(const SubmissionDir& dir, const std::optional<Record>& record,
                           const std::string& no_record_reason, const GradeOptions& options);

// The lab's step titles, 1-8.
[[nodiscard]] const char* step_title(int step) noexcept;

}  // namespace cb::grade
