#pragma once
// The conformance part's evidence: every trace a program was given, and what it answered. Kept
// by `cb-grade --batch --reports` (conformance.json), so `--regrade` can judge the same answers
// again under a changed rubric or grader without starting the program.

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cb/grade/conformance_traces.h"
#include "cb/result.h"

namespace cb::grade::conformance {

class AnswerLog {
 public:
  AnswerLog() = default;
  AnswerLog(const AnswerLog& other);
  // Not while the programs it made are running (they write to this one).
  AnswerLog& operator=(const AnswerLog& other);

  // `programs`, keeping here each trace they answer (traces may run at once), alone or not,
  // and how many processes they started. The log must outlive the returned programs.
  [[nodiscard]] Programs recording(Programs programs);
  // Answers from the log alone. A trace it does not hold (the grader now asks one the first grade
  // never did) answers as the rules do, so the shrinker never takes it for a counterexample, and
  // is remembered in missed(): the caller decides whether a missing answer changes the verdict.
  // An experiment it does not hold (Programs::explore) is answered `unkept` and not remembered.
  [[nodiscard]] Programs replaying();
  [[nodiscard]] bool holds(const Trace& trace) const;
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::size_t missed() const;

  [[nodiscard]] nlohmann::json to_json() const;
  // Errors name the field.
  [[nodiscard]] static Result<AnswerLog> from_json(const nlohmann::json& j, const std::string& name);

 private:
  struct Kept {
    std::vector<Answer> answers;
    std::string problem;
    std::string stderr_tail;
    bool shared = false;
    bool open = false;
    bool timed_out = false;
    bool in_flight = false;  // it said so in its first answer
  };
  [[nodiscard]] Program recorded(Program program, bool alone);
  [[nodiscard]] Program replayed(bool alone, bool explore);
  mutable std::mutex mu_;
  // By the SHA-256 of the trace's protocol input, "alone " before it for a run alone.
  std::map<std::string, Kept> by_input_;
  int processes_ = 0;
  std::set<std::string> missed_;
};

}  // namespace cb::grade::conformance
