#pragma once
// Building one step's checks, check50-style, from the catalogue in lab_spec.h: a check is named
// by its id; a check whose prerequisite failed or was skipped is skipped with the reason, not
// failed with noise; a check the step never reached is skipped the same way at finish().

#include <chrono>
#include <map>
#include <optional>
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

// What every step's prerequisites are judged on: the record, and the lab files' parses.
struct Prerequisites {
  bool has_record = false;
  std::string no_record_reason;
  // The record is there but holds what the program did wrong to it as a whole (two runs): the
  // checks that judge its requests are skipped with this reason; s1.once fails with it.
  std::string record_unusable;
  std::map<std::string, std::string, std::less<>> file_problems;  // file name -> problem; absent when it parsed
};

// A step's status and score from its checks: fail if one failed, else error if one erred, else
// pass if one passed, else skip. A step scores all its points or none.
void settle(StepReport& step, double points);

class StepBuilder {
 public:
  StepBuilder(int step, bool just_after, const Prerequisites& pre);

  // Whether check `id` may run: every check it needs passed (and the record, and the files it
  // reads, are there). A check that may not run is skipped at finish() with the reason.
  [[nodiscard]] bool ready(std::string_view id) const;
  [[nodiscard]] const Prerequisites& pre() const noexcept { return pre_; }

  void pass(std::string_view id, nlohmann::json expected = nullptr, nlohmann::json actual = nullptr);
  // A pass that must say what it stood on (the benefit of a doubt the record cannot settle).
  void pass_noting(std::string_view id, std::string note, nlohmann::json expected = nullptr,
                   nlohmann::json actual = nullptr);
  void fail(std::string_view id, std::string message, nlohmann::json expected = nullptr,
            nlohmann::json actual = nullptr);
  void skip(std::string_view id, std::string reason);
  // pass or fail on `ok`; `message` is only kept on failure.
  void expect(bool ok, std::string_view id, const std::string& message, nlohmann::json expected = nullptr,
              nlohmann::json actual = nullptr);

  // A file's contract check: passes and returns the value, or fails and returns nullptr.
  template <class T>
  const T* file(const Parsed<T>& p, std::string_view contract_id) {
    if (p.ok) {
      pass(contract_id);
      return &*p.value;
    }
    fail(contract_id, p.problem);
    return nullptr;
  }

  // Every check of this step that applies and was not reported is skipped, with the reason its
  // first unmet prerequisite gives; then the checks are put in catalogue order.
  [[nodiscard]] StepReport finish(double points);

 private:
  [[nodiscard]] const Check* reported(std::string_view id) const;
  [[nodiscard]] std::optional<std::string> unmet(std::string_view id) const;
  void add(std::string_view id, Status status, std::string message, nlohmann::json expected, nlohmann::json actual);

  StepReport step_;
  bool just_after_;
  const Prerequisites& pre_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace cb::grade
