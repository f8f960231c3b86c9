#pragma once
// Building one step's checks, check50-style: a check whose prerequisite failed is skipped with
// the reason, not failed with noise.

#include <chrono>
#include <initializer_list>
#include <optional>
#include <string>

#include "cb/grade/report.h"

namespace cb::grade {

// A lab file as read and parsed: present or not, and if present, parsed or why not.
template <class T>
struct Parsed {
  bool ok = false;
  std::string problem;  // "state.json is missing", "state.json: line 1, column 9: ..."
  std::optional<T> value;
};

class StepBuilder {
 public:
  explicit StepBuilder(int step);

  void pass(std::string name, nlohmann::json expected = nullptr, nlohmann::json actual = nullptr);
  void fail(std::string name, std::string message, nlohmann::json expected = nullptr, nlohmann::json actual = nullptr);
  void skip(std::string name, std::string reason);
  // pass or fail on `ok`; `message` is only shown on failure.
  void expect(bool ok, std::string name, const std::string& message, nlohmann::json expected = nullptr,
              nlohmann::json actual = nullptr);

  // The next checks are judged on the server's record (and are skipped without one).
  void on_evidence(bool v) { evidence_ = v; }

  // "<file> follows the contract": passes and returns the value, or fails (or is skipped) and
  // skips every dependent check with the same reason.
  template <class T>
  const T* file(const Parsed<T>& p, const std::string& check_name, std::initializer_list<std::string> dependents) {
    if (p.ok) {
      pass(check_name);
      return &*p.value;
    }
    fail(check_name, p.problem);
    for (const std::string& d : dependents) skip(d, "needs " + check_name.substr(0, check_name.find(' ')) + ": " + p.problem);
    return nullptr;
  }

  [[nodiscard]] StepReport finish(double points);

 private:
  StepReport step_;
  bool evidence_ = false;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace cb::grade
