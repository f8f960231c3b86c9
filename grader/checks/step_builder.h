#pragma once
// Running one step's checks, check50-style. Each step's file says which checks it has, in what
// order, and what each needs (check.h). A check whose need is unmet is skipped with the reason and
// its body never runs, so no body judges on what it was not given; a body reports exactly one
// verdict.

#include <chrono>
#include <map>
#include <set>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cb/grade/lab_spec.h"
#include "cb/grade/report.h"
#include "cb/grade/check.h"

namespace cb::grade {

// A lab file as read and parsed: present or not, and if present, parsed or why not.
template <class T>
struct Parsed {
  bool ok = false;
  std::string problem;  // "state.json is missing", "state.json: line 1, column 9: ..."
  std::optional<T> value;
};

// What every step's needs are judged on: the record, and the lab files' parses.
struct Prerequisites {
  bool has_record = false;
  std::string no_record_reason;
  // The record is there but holds what the program did wrong to it as a whole (two runs): the
  // checks that judge its requests are skipped with this reason; s1.once fails with it.
  std::string record_unusable;
  // The run follows other numbers than the ones it is graded on (s1.numbers): the checks that
  // judge its requests against these numbers are skipped with this reason, so it is charged once.
  std::string other_numbers;
  std::map<std::string, std::string, std::less<>> file_problems;  // file role -> problem; absent when it parsed
  // The steps this report shows: a file's problem is said in full by its contract's check when
  // that check's step is shown, and only pointed to elsewhere.
  std::set<int> shown_steps;
};

// Why a check that stands on the numbers is not judged when the run follows others.
inline constexpr std::string_view kOtherNumbers =
    "not judged: the run follows other numbers than the ones it is graded on (s1.numbers says whose)";

// A step's status and score from its checks: fail if one failed, else error if one erred, else
// pass if a check of a rule passed (a file's contract alone passes nothing), else skip. A step
// scores all its points or none.
void settle(StepReport& step, double points);

struct Inputs;  // lab_checks.h

// Every check of step `step` that applies (--step N or a finished run), in catalogue order.
[[nodiscard]] StepReport check_step(int step, bool just_after, const Inputs& in, const Prerequisites& pre,
                                    double points);

}  // namespace cb::grade
