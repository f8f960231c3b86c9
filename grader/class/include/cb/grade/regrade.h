#pragma once
// `--regrade DIR`: a class judged again on the evidence `--batch --reports` kept (class_reports.h),
// with nothing run at all: a new rubric or a new grader over the same evidence. `verify DIR`: the
// same judging, nothing rewritten, to show which grades do not follow from their evidence.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cb/grade/batch.h"
#include "cb/grade/class_reports.h"

namespace cb::grade {

struct RegradeOptions {
  std::string dir;      // what --batch --reports kept
  GradeOptions grade;   // the rubric and the lab to grade on now (a variant keeps its numbers)
  int jobs = 0;         // 0: one per CPU this process may use
  bool rewrite = true;  // false: `verify`, the reports are left as they are
  std::function<void(std::size_t done, std::size_t total)> progress;
};

// Every folder of `dir` graded again; each row says what changed. Reports are rewritten.
// Errors: `dir` cannot be listed.
[[nodiscard]] Result<std::vector<BatchRow>> regrade(const RegradeOptions& options);

// DIR/NAME judged again on what was kept there, its reports rewritten (unless not `rewrite`:
// `cb-grade verify` only compares).
[[nodiscard]] BatchRow regrade_submission(const std::string& dir, const std::string& name, const GradeOptions& grade,
                                          bool rewrite = true);

// What differs between a kept report.json and a new grade, for a person, in three kinds: a
// verdict (a step's or the conformance part's status, or its rule), the points alone (a new
// rubric rescales a grade whose verdicts stand), and what gave the grade (grader, lab spec).
struct Changes {
  std::vector<std::string> verdicts;    // "step 3: fail -> pass", "conformance: fail -> pass"
  std::string score;                    // "score 7/9 -> 8/9", or ""
  std::vector<std::string> provenance;  // "grader 1.2 -> 1.3", "another lab spec", "evidence edited ..."
  bool evidence_changed = false;        // the kept evidence is not what the grade was judged on
  [[nodiscard]] bool verdict_changed() const { return !verdicts.empty(); }
  [[nodiscard]] bool any() const { return !verdicts.empty() || !score.empty() || !provenance.empty(); }
  [[nodiscard]] std::string text() const;  // all of it, "; " between: "" when nothing differs
};
[[nodiscard]] Changes changes(const nlohmann::json& before, const Report& after);

}  // namespace cb::grade
