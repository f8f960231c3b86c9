#pragma once
// Running one step's checks, check50-style. The catalogue (lab_spec.h) says which checks a step
// has, in what order, and what each needs; each body is registered beside its code under its id
// (checks_early.cpp, checks_late.cpp). A check whose need is unmet is skipped with the reason
// and its body never runs, so no body judges on what it was not given; a body reports exactly
// one verdict.

#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cb/grade/lab_spec.h"
#include "cb/grade/report.h"

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
};

// Why a check that stands on the numbers is not judged when the run follows others.
inline constexpr std::string_view kOtherNumbers =
    "not judged: the run follows other numbers than the ones it is graded on (s1.numbers says whose)";

// A step's status and score from its checks: fail if one failed, else error if one erred, else
// pass if a check of a rule passed (a file's contract alone passes nothing), else skip. A step
// scores all its points or none.
void settle(StepReport& step, double points, const LabSpec& spec);

struct Inputs;  // lab_checks.h

// The one verdict a check's body gives.
class CheckVerdict {
 public:
  void pass(nlohmann::json expected = nullptr, nlohmann::json actual = nullptr);
  // A pass that must say what it stood on (the benefit of a doubt the record cannot settle).
  void pass_noting(std::string note, nlohmann::json expected = nullptr, nlohmann::json actual = nullptr);
  void fail(std::string message, nlohmann::json expected = nullptr, nlohmann::json actual = nullptr);
  void skip(std::string reason);
  // Skipped because what it judges is absent (no record): its dependants are skipped for the same
  // reason, in the same words, rather than for standing on a check that did not pass.
  void skip_absent(std::string reason);
  // pass or fail on `ok`; `message` is only kept on failure.
  void expect(bool ok, const std::string& message, nlohmann::json expected = nullptr, nlohmann::json actual = nullptr);

 private:
  friend StepReport check_step(int, bool, const Inputs&, const Prerequisites&, double);
  void set(Status status, std::string message, nlohmann::json expected, nlohmann::json actual);
  bool reported_ = false;
  bool twice_ = false;
  bool absent_ = false;
  Status status_ = Status::Skip;
  std::string message_;
  nlohmann::json expected_, actual_;
};

// A check's body: it judges, and says so in `v`. `just_after` is true under --step N.
using CheckBody = void (*)(CheckVerdict& v, const Inputs& in, bool just_after);
struct CheckEntry {
  std::string_view id;
  CheckBody body;
};
// The bodies, each file's table beside its code. A file's contract check has none of its own: the
// catalogue's "contract" names the file, and contract_check() judges it.
[[nodiscard]] std::span<const CheckEntry> early_checks() noexcept;  // steps 1-4
[[nodiscard]] std::span<const CheckEntry> late_checks() noexcept;   // steps 5-8
// nullptr when no body is registered under `id`.
[[nodiscard]] CheckBody find_body(std::string_view id) noexcept;

// Every check of step `step` that applies (--step N or a finished run), in catalogue order.
[[nodiscard]] StepReport check_step(int step, bool just_after, const Inputs& in, const Prerequisites& pre,
                                    double points);

}  // namespace cb::grade
