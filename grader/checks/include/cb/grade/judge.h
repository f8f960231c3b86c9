#pragma once
// judge(): a submission's evidence turned into its report, under what the grader asks (the
// steps, the rubric, the lab). It runs nothing and reads nothing but the evidence: a first
// grading, --batch, --regrade and cb-lab's grading as it goes all end here, so one set of
// evidence gets one verdict wherever and however often it is judged.

#include "cb/grade/evidence.h"
#include "cb/grade/grade.h"
#include "cb/grade/report.h"

namespace cb::grade {

[[nodiscard]] Report judge(const Evidence& evidence, const GradeOptions& options);

// The conformance part alone, judged on the answers kept (jobs: 1; a replay takes no time).
// A trace the answers do not hold is one the first grading never asked: if its shrinking ran
// out of time, that is where it stopped (the example is as small as it got); otherwise a newer
// grader wants an answer nobody gave, and the part is not judged (rule "not_kept"). A rubric that
// fixes other traces (its seed or number) than the answers are to leaves it not judged too
// ("other_traces"): a regrade runs nothing.
[[nodiscard]] ConformancePart judge_conformance(const ConformanceEvidence& evidence, const Rubric& rubric);

}  // namespace cb::grade
